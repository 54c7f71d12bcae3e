import { describe, expect, it } from 'vitest';
import { dayAfter, sparklineShape } from '../../src/sparkline.js';

describe('downloads sparkline geometry', () => {
  it('spreads the days across the width, oldest left, the peak at the top, zero at the bottom', () => {
    const shape = sparklineShape([0, 5, 10], 100, 20, 2);
    expect(shape.peak).toBe(10);
    expect(shape.line).toBe('M 2.0 18.0 L 50.0 10.0 L 98.0 2.0');
    expect(shape.area).toBe('M 2.0 18.0 L 50.0 10.0 L 98.0 2.0 L 98.0 18.0 L 2.0 18.0 Z');
  });

  it('draws no downloads as a flat line along the bottom', () => {
    const shape = sparklineShape(Array(30).fill(0), 240, 48);
    expect(shape.peak).toBe(1);
    const ys = shape.line
      .slice(2)
      .split(' L ')
      .map((point) => point.split(' ')[1]);
    expect(ys).toHaveLength(30);
    expect(new Set(ys)).toEqual(new Set(['46.0']));
  });

  it('counts days in UTC', () => {
    expect(dayAfter('2026-10-27', 29)).toBe('2026-11-25');
    expect(dayAfter('2026-12-31', 1)).toBe('2027-01-01');
  });
});
