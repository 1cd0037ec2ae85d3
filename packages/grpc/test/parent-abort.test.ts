import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { isTimeout, unwatchParentAbort, watchParentAbort, type ParentAbortListener } from '../src/parent-abort.js';

function listener(): ParentAbortListener & { aborted: number } {
  return {
    aborted: 0,
    onParentAbort() {
      this.aborted++;
    },
  };
}

describe('parent-abort', () => {
  describe('#watchParentAbort', () => {
    it('tells every call still running under a signal when it aborts', () => {
      const parent = new AbortController();
      const [a, b] = [listener(), listener()];
      watchParentAbort(parent.signal, a);
      watchParentAbort(parent.signal, b);
      parent.abort(new Error('client went away'));
      expect([a.aborted, b.aborted]).toEqual([1, 1]);
    });

    it('adds one abort listener per signal however many calls run under it', () => {
      const parent = new AbortController();
      for (let i = 0; i < 50; i++) watchParentAbort(parent.signal, listener());
      expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
      parent.abort();
      expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    });

    it('says nothing when the signal aborts because its deadline passed (each call has that deadline too)', () => {
      const parent = new AbortController();
      const call = listener();
      watchParentAbort(parent.signal, call);
      parent.abort(new DOMException('The operation timed out', 'TimeoutError'));
      expect(call.aborted).toBe(0);
    });

    it('starts afresh for calls made under a signal after the first abort was handled', () => {
      const parent = new AbortController();
      watchParentAbort(parent.signal, listener());
      parent.abort();
      const late = listener();
      watchParentAbort(parent.signal, late);
      // An aborted signal fires no further 'abort' events: a late call is not told (its own start refuses it).
      expect(late.aborted).toBe(0);
    });
  });

  describe('#unwatchParentAbort', () => {
    it('stops telling a call whose status arrived, and leaves the others watched', () => {
      const parent = new AbortController();
      const [done, running] = [listener(), listener()];
      watchParentAbort(parent.signal, done);
      watchParentAbort(parent.signal, running);
      unwatchParentAbort(parent.signal, done);
      parent.abort();
      expect([done.aborted, running.aborted]).toEqual([0, 1]);
    });

    it('does nothing for a signal it never watched', () => {
      expect(() => unwatchParentAbort(new AbortController().signal, listener())).not.toThrow();
    });
  });

  describe('#isTimeout', () => {
    it('is true only for the TimeoutError DOMException a deadline aborts with', () => {
      expect(isTimeout(new DOMException('late', 'TimeoutError'))).toBe(true);
      expect(isTimeout(new DOMException('stop', 'AbortError'))).toBe(false);
      expect(isTimeout(Object.assign(new Error('late'), { name: 'TimeoutError' }))).toBe(false);
      expect(isTimeout(undefined)).toBe(false);
    });
  });
});
