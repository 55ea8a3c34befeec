// Two measurements taken at the same time: `count` samples of each, in
// alternating blocks, and which side goes first alternates too, so that a
// machine whose speed drifts from minute to minute slows both alike.

/** Samples a block at a time. */
export const BLOCK = 25;

/** `count` samples of each side (`sample(i)`, i counting from 0), in alternating blocks of BLOCK. */
export async function interleaved(count: number, first: (i: number) => Promise<number>, second: (i: number) => Promise<number>): Promise<[number[], number[]]> {
  const samples: [number[], number[]] = [[], []];
  for (let block = 0; block * BLOCK < count; block++) {
    const size = Math.min(BLOCK, count - block * BLOCK);
    const sides = ([0, 1] as const).map((side) => async () => {
      const sample = side === 0 ? first : second;
      for (let i = 0; i < size; i++) samples[side].push(await sample(block * BLOCK + i));
    });
    for (const side of block % 2 ? sides.reverse() : sides) await side();
  }
  return samples;
}
