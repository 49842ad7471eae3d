import { z } from 'zod';
import { DEVICE_ID_CHARACTERS, DEVICE_ID_MAX_LENGTH, DEVICE_ID_MIN_LENGTH, DEVICE_ID_RULE } from './edge.js';

/** The X-Device-Id header of a fan route, by the device id rule (`isDeviceId`), for a route's zod schema. */
export const deviceIdHeaderSchema = z
  .string()
  .min(DEVICE_ID_MIN_LENGTH, DEVICE_ID_RULE)
  .max(DEVICE_ID_MAX_LENGTH)
  .regex(DEVICE_ID_CHARACTERS, DEVICE_ID_RULE);
