export const fairnessModes = ['RANDOMIZED_PREOPEN_THEN_FIFO', 'FIFO', 'REGISTRATION_LOTTERY'] as const;
