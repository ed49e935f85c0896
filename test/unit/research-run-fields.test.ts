import assert from 'node:assert/strict';
import { test } from '@jest/globals';
import type { ResearchRun } from '../../workflows/research-run';

/*
 * ResearchRun owns its writes (issue 17.2): the phases replace its state with pure functions from
 * src/core/, and everything else it keeps is written by its own methods. Checked by the type
 * checker (`npm run typecheck`): a public field anyone may assign, other than `state`, fails to compile.
 */

type IfEquals<X, Y, A, B> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? A : B;

/** The public fields of `T` that can be assigned: neither readonly (nor a getter alone) nor a method. */
type MutableFields<T> = {
  [K in keyof T]-?: T[K] extends (...args: never[]) => unknown
    ? never
    : IfEquals<{ [Q in K]: T[K] }, { -readonly [Q in K]: T[K] }, K, never>;
}[keyof T];

type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

class Sample {
  readonly fixed = 1;
  open = 2;
  private hidden = 3;
  get derived(): number {
    return this.hidden;
  }
  method(): void {}
}

const sampleFound: Exactly<MutableFields<Sample>, 'open'> = true;
const onlyState: Exactly<MutableFields<ResearchRun>, 'state'> = true;

test('ResearchRun has no public mutable field but its state', () => {
  assert.equal(sampleFound, true, 'the check finds a public mutable field');
  assert.equal(onlyState, true);
});
