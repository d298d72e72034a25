import * as assert from 'node:assert/strict';
import { clampDrawerHeight, DEFAULT_DRAWER_HEIGHT, MIN_DRAWER_HEIGHT, MIN_TIMELINE_HEIGHT } from './drawer';

describe('details drawer height', () => {
  it('keeps the drawer and the timeline above it their minimums', () => {
    assert.equal(clampDrawerHeight(300, 800), 300);
    assert.equal(clampDrawerHeight(10, 800), MIN_DRAWER_HEIGHT);
    assert.equal(clampDrawerHeight(790, 800), 800 - MIN_TIMELINE_HEIGHT);
    assert.equal(clampDrawerHeight(300, 100), MIN_DRAWER_HEIGHT, "a tiny page still shows the drawer's minimum");
    assert.equal(clampDrawerHeight(NaN, 800), DEFAULT_DRAWER_HEIGHT);
  });
});
