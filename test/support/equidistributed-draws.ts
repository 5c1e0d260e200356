import type { Random } from '../../lambdas/clock';

/**
 * Draws that spread each kind of choice exactly evenly: the k-th draw a request makes (the copy
 * authentication reads, then the usage shard) takes the next value of a van der Corput sequence
 * of its own (the bits of 1, 2, 3, … mirrored about the binary point), and every block of 2^n
 * values of a sequence holds exactly one in each 2^-n interval: over whole blocks of requests,
 * each kind of choice falls on every power-of-two count of copies or shards alike, as many
 * random draws do on average. `endRequest` starts the next request's draws at the first kind,
 * `startRow` every sequence at its start.
 */
export function equidistributed(): { random: Random; endRequest(): void; startRow(): void } {
  let drawn: number[] = [];
  let made = 0;
  const vanDerCorput = (index: number) => {
    let value = 0;
    for (let weight = 0.5, bits = index; bits > 0; weight /= 2, bits >>= 1) if (bits & 1) value += weight;
    return value;
  };
  return {
    random: () => {
      const kind = made++;
      drawn[kind] = (drawn[kind] ?? 0) + 1;
      return vanDerCorput(drawn[kind]!);
    },
    endRequest: () => {
      made = 0;
    },
    startRow: () => {
      drawn = [];
      made = 0;
    },
  };
}
