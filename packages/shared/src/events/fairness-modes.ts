export const fairnessModes = ['RANDOMIZED_PREOPEN_THEN_FIFO', 'FIFO', 'REGISTRATION_LOTTERY'] as const;

/** One of the fairness modes (the events table's `fairness_mode`). */
export type FairnessMode = (typeof fairnessModes)[number];
