import { execFileSync } from 'node:child_process';
import { describe, expect, inject, it } from 'vitest';

/**
 * What the registry shows and installs, read from each packed tarball: the same engines, licence
 * and links everywhere, core as a caret peer, peer ranges with an upper bound, README links that
 * work off GitHub, source maps that carry their sources, and nothing but dist/, src/ and the docs.
 */
const tarballs = inject('tarballs');
const repository = 'https://github.com/tickwheel/tickwheel';

/** The fields of package.json this file reads. */
interface Manifest {
  version: string;
  license: string;
  engines: unknown;
  repository: unknown;
  homepage: string;
  bugs: unknown;
  private?: boolean;
  files?: string[];
  publishConfig?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

function files(tarball: string): string[] {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8', timeout: 30_000 })
    .trim()
    .split('\n')
    .map((entry) => entry.replace(/^package\//, ''));
}

function read(tarball: string, file: string): string {
  return execFileSync('tar', ['-xzOf', tarball, `package/${file}`], {
    encoding: 'utf8',
    timeout: 30_000,
    maxBuffer: 64 * 1024 * 1024,
  });
}

describe('package metadata', () => {
  for (const [name, tarball] of Object.entries(tarballs)) {
    const folder = name.replace('@tickwheel/', '');

    describe(name, () => {
      const manifest = JSON.parse(read(tarball, 'package.json')) as Manifest;

      it('says the same engines, licence, repository, homepage and bugs as every other package', () => {
        expect(manifest.engines).toEqual({ node: '>=20.19.0' });
        expect(manifest.license).toBe('MIT');
        expect(manifest.repository).toEqual({
          type: 'git',
          url: `git+${repository}.git`,
          directory: `packages/${folder}`,
        });
        expect(manifest.homepage).toBe(`${repository}/tree/main/packages/${folder}#readme`);
        expect(manifest.bugs).toEqual({ url: `${repository}/issues` });
      });

      it('is ready for `npm publish --provenance`: public, its repository on GitHub over https, its files listed', () => {
        // npm's provenance check compares repository.url with the repository the build ran in.
        expect(manifest.private).toBeUndefined();
        expect(manifest.publishConfig).toEqual({ access: 'public' });
        expect((manifest.repository as { url: string }).url).toMatch(
          /^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/,
        );
        expect(manifest.files).toEqual(expect.arrayContaining(['dist', 'src', 'README.md', 'LICENSE']));
      });

      it('ships dist/, src/, README.md, LICENSE and package.json, and nothing else', () => {
        const shipped = files(tarball);
        // core's internal/package.json, ws's browser/package.json and http's express/, fastify/ and koa/package.json point node10 resolution at their subpaths.
        const subpaths: Record<string, string[]> = {
          '@tickwheel/core': ['internal/package.json'],
          '@tickwheel/ws': ['browser/package.json'],
          '@tickwheel/http': ['express/package.json', 'fastify/package.json', 'koa/package.json'],
        };
        const extra = subpaths[name] ?? [];
        expect(shipped.filter((file) => !/^(dist|src)\//.test(file)).sort()).toEqual(
          ['LICENSE', 'README.md', ...extra, 'package.json'].sort(),
        );
        expect(shipped.filter((file) => /tsbuildinfo|\.test\.|(^|\/)test\//.test(file))).toEqual([]);
        expect(read(tarball, 'LICENSE')).toMatch(/^MIT License/);
      });

      it('has core as a caret peer and an upper bound on every peer range', () => {
        const peers = manifest.peerDependencies ?? {};
        if (name !== '@tickwheel/core') expect(peers['@tickwheel/core']).toBe(`^${manifest.version}`);
        expect(manifest.dependencies?.['@tickwheel/core']).toBeUndefined();
        for (const [peer, range] of Object.entries(peers)) {
          expect(range, peer).toMatch(/^\^\d+\.\d+\.\d+( \|\| \^\d+\.\d+\.\d+)*$/);
        }
      });

      it('links only to absolute URLs from its README, so the links work on the registry page', () => {
        const links = [...read(tarball, 'README.md').matchAll(/\]\(([^)]+)\)/g)].map((match) => match[1]);
        expect(links.filter((link) => !/^(https:\/\/|#)/.test(link))).toEqual([]);
      });

      it('ships source maps that carry their sources', () => {
        const maps = files(tarball).filter((file) => file.endsWith('.js.map'));
        expect(maps.length).toBeGreaterThan(0);
        for (const map of maps) {
          const parsed = JSON.parse(read(tarball, map)) as { sources: string[]; sourcesContent?: string[] };
          expect(parsed.sourcesContent?.length, map).toBe(parsed.sources.length);
        }
      });
    });
  }
});
