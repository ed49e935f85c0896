import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { characterEstimateCounter, countConversationTokens } from '../../activities/token-counter';
import {
  calibrationAfterCall,
  inEstimatedTokens,
  inServerTokens,
  MAX_SERVER_TOKENS_PER_ESTIMATED_TOKEN,
  MIN_SERVER_TOKENS_PER_ESTIMATED_TOKEN,
  UNCALIBRATED,
} from '../../src/core/token-calibration';

describe('token calibration', () => {
  test("the ratio is the server's prompt tokens over our estimate of the same prompt", () => {
    assert.equal(calibrationAfterCall(UNCALIBRATED, 1_500, 1_000), 1.5);
    assert.equal(calibrationAfterCall(1.5, 900, 1_000), 0.9, 'the last call decides, not an average');
    assert.equal(calibrationAfterCall(UNCALIBRATED, 1_000, 3_000), 0.333);
  });
  test('no usable pair keeps the previous ratio: older histories, zero counts', () => {
    assert.equal(calibrationAfterCall(1.5, 1_000, undefined), 1.5);
    assert.equal(calibrationAfterCall(1.5, 1_000, 0), 1.5);
    assert.equal(calibrationAfterCall(1.5, 0, 1_000), 1.5);
  });
  test('nonsense is bounded', () => {
    assert.equal(calibrationAfterCall(UNCALIBRATED, 1, 10_000), MIN_SERVER_TOKENS_PER_ESTIMATED_TOKEN);
    assert.equal(calibrationAfterCall(UNCALIBRATED, 1_000_000, 10), MAX_SERVER_TOKENS_PER_ESTIMATED_TOKEN);
  });
  test('conversions: estimates to server tokens round up, server tokens to estimates round down, 1 changes nothing', () => {
    assert.equal(inServerTokens(1_001, 1.5), 1_502);
    assert.equal(inEstimatedTokens(3_000, 1.5), 2_000);
    assert.equal(inEstimatedTokens(3_001, 1.5), 2_000);
    for (const tokens of [0, 1, 37, 110_000]) {
      assert.equal(inServerTokens(tokens, UNCALIBRATED), tokens);
      assert.equal(inEstimatedTokens(tokens, UNCALIBRATED), tokens);
    }
  });
  test('a compression target in estimate units, calibrated back, is the target in server tokens', () => {
    const ratio = calibrationAfterCall(UNCALIBRATED, 1_500, 1_000);
    const target = 6_000;
    assert.ok(inServerTokens(inEstimatedTokens(target, ratio), ratio) <= target);
  });
  test('our estimate of a conversation counts contents, native tool calls and a little per message', () => {
    const tokens = countConversationTokens(
      [
        { role: 'user', content: '12345678' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'look', arguments: '{"q":1}' }] },
      ],
      characterEstimateCounter,
    );
    assert.equal(tokens, 2 + 4 + 0 + 3 + 4);
  });
});
