// Regenerates examples/stadium.json: `node_modules/.bin/tsx examples/generate-stadium.ts > examples/stadium.json`.
// 150 sections x 20 rows x 20 seats = 60,000 seats. The stage is at the north end of the arena; each
// section's qualityRank is its place in the order of distance from the stage front (1 = closest).

interface Placed {
  code: string;
  name: string;
  priceLevel: 'FLOOR' | 'LOWER' | 'UPPER';
  x: number;
  y: number;
  /** Height above the floor, metres. */
  z: number;
}

// Metres; the arena's centre is (0, 0), the stage front is at the north end.
const stageFront = { x: 0, y: 55 };
const placed: Placed[] = [];

// Floor: 2 columns x 5 blocks in front of the stage.
for (let i = 0; i < 5; i++)
  for (const [side, x] of [
    ['L', -12],
    ['R', 12],
  ] as const)
    placed.push({
      code: `F${i + 1}${side}`,
      name: `Floor ${i + 1} ${side === 'L' ? 'Left' : 'Right'}`,
      priceLevel: 'FLOOR',
      x,
      y: 40 - 12 * i,
      z: 0,
    });

// A horseshoe bowl: angle 0 faces the stage from the far end; the arc stops short of the sides of the stage.
function bowl(
  prefix: string,
  first: number,
  count: number,
  radius: number,
  height: number,
  maxDegrees: number,
  level: Placed['priceLevel'],
  label: string,
) {
  for (let i = 0; i < count; i++) {
    const deg = -maxDegrees + (2 * maxDegrees * i) / (count - 1);
    const rad = (deg * Math.PI) / 180;
    const n = first + i;
    placed.push({
      code: `${prefix}${n}`,
      name: `${label} ${n}`,
      priceLevel: level,
      x: radius * Math.sin(rad),
      y: -radius * Math.cos(rad),
      z: height,
    });
  }
}
bowl('L', 101, 60, 75, 10, 135, 'LOWER', 'Lower');
bowl('U', 301, 80, 110, 30, 140, 'UPPER', 'Upper');

const distance = (p: Placed) => Math.hypot(p.x - stageFront.x, p.y - stageFront.y, p.z);
const ranked = [...placed].sort((a, b) => distance(a) - distance(b) || a.code.localeCompare(b.code));
const rank = new Map(ranked.map((p, i) => [p.code, i + 1]));

const event = {
  name: 'Aurora Skies World Tour — Stadium Night',
  venueName: 'Harbour Stadium',
  listing: { name: 'Aurora Skies World Tour' },
  startsAt: '2027-06-19T19:30:00+01:00',
  onsaleAt: '2027-03-02T10:00:00+00:00',
  seatPickingOpensAfterMinutes: 30,
  fairnessMode: 'RANDOMIZED_PREOPEN_THEN_FIFO',
  limits: { perAccountSeats: 4, perInstrumentSeats: 4 },
  holds: { ttlSeconds: 360, extensionSeconds: 180 },
  pacing: { targetSaleMinutes: 25, ticketsPerOrder: 2.5, checkoutMinutes: 6, paymentTps: 1000, overbookFactor: 1.3 },
  priceLevels: [
    { code: 'FLOOR', name: 'Floor', priceCents: 18900 },
    { code: 'LOWER', name: 'Lower bowl', priceCents: 12900 },
    { code: 'UPPER', name: 'Upper bowl', priceCents: 6900 },
  ],
  sections: placed.map((p) => ({
    code: p.code,
    name: p.name,
    priceLevel: p.priceLevel,
    qualityRank: rank.get(p.code)!,
    rowCount: 20,
    seatsPerRow: 20,
  })),
};

// One section per line keeps the file reviewable.
const body = JSON.stringify({ ...event, sections: [] }, null, 2).replace(
  '"sections": []',
  `"sections": [\n${event.sections.map((s) => `    ${JSON.stringify(s)}`).join(',\n')}\n  ]`,
);
process.stdout.write(`${body}\n`);
