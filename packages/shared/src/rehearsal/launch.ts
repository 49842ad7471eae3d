import { z } from 'zod';

// A rehearsal started from the console: which of the repository's example sales, how many virtual fans, how many of
// them bots, how fast the event's clock runs. The console's form and the BFF check it with this one schema, and
// rehearseArgs turns it into the command line the CLI runs (`onsale rehearse`), so both say the same thing.

/** The example sales a rehearsal can be started on from the console, by name: their event files. */
export const REHEARSAL_EXAMPLES = {
  club: { file: 'examples/club.json', label: 'Club night (300 seats, 2 sections)' },
  ga: { file: 'examples/ga.json', label: 'General admission floor' },
  presale: { file: 'examples/presale.json', label: 'Arena with presale tiers' },
  stadium: { file: 'examples/stadium.json', label: 'Stadium (60,000 seats, 150 sections)' },
} as const;
export type RehearsalExample = keyof typeof REHEARSAL_EXAMPLES;

/** The most virtual fans a console-started rehearsal may bring (larger runs: the CLI, on a machine sized for them). */
export const CONSOLE_REHEARSAL_MAX_FANS = 200_000;

export const rehearsalLaunchSchema = z.object({
  example: z.enum(Object.keys(REHEARSAL_EXAMPLES) as [RehearsalExample, ...RehearsalExample[]], { error: 'Choose the sale to rehearse.' }),
  fans: z
    .number({ error: 'Enter how many virtual fans come, as a whole number.' })
    .int('Enter how many virtual fans come, as a whole number.')
    .min(10, 'A rehearsal needs at least 10 virtual fans.')
    .max(CONSOLE_REHEARSAL_MAX_FANS, `At most ${CONSOLE_REHEARSAL_MAX_FANS.toLocaleString('en-US')} virtual fans from the console.`),
  botsShare: z
    .number({ error: 'Enter the share of bots as a number from 0 to 0.9.' })
    .min(0, 'The share of bots cannot be negative.')
    .max(0.9, 'At most 0.9 of the fans can be bots.'),
  timeScale: z
    .number({ error: 'Enter how many times faster the event clock runs.' })
    .min(1, 'The event clock cannot run slower than real time (1).')
    .max(1000, 'The event clock can run at most 1,000 times faster.'),
});
export type RehearsalLaunch = z.infer<typeof rehearsalLaunchSchema>;

/** The CLI's command line for a launch against `target` (the product's fan-facing URL: its edge or store API). */
export function rehearseArgs(launch: RehearsalLaunch, target: string): string[] {
  return [
    'rehearse',
    '--event-file',
    REHEARSAL_EXAMPLES[launch.example].file,
    '--fans',
    String(launch.fans),
    '--bots-share',
    String(launch.botsShare),
    '--time-scale',
    String(launch.timeScale),
    '--target',
    target,
  ];
}
