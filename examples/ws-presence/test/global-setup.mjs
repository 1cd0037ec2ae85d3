/**
 * ws-presence needs Debian's redis-server: install it when it is missing (CI starts from a
 * machine with only Node and npm). Nothing to do when the binary is on PATH.
 */
import { ensureDebianPackages, onPath } from '../../../scripts/ensure-debian-packages.mjs';

export default function setup() {
  ensureDebianPackages(['redis-server'], () => onPath('redis-server'), 'ws-presence');
}
