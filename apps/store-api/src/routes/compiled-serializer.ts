import fastJson from 'fast-json-stringify';
import { z } from 'zod';

/**
 * A route's answers written by fast-json-stringify from the JSON Schema of its zod response schemas, compiled once
 * when the route is registered, instead of a zod parse and JSON.stringify of every answer: for the hottest route
 * (the status poll). The zod schemas stay the contract (types, OpenAPI); the JSON Schema is derived from them, so
 * fields not in the schema are left out as before.
 */
export const compiledSerializer = ({ schema }: { schema: unknown }): ((data: unknown) => string) =>
  fastJson(
    z.toJSONSchema(schema as z.ZodType, { target: 'draft-7', io: 'output', unrepresentable: 'any' }) as Parameters<typeof fastJson>[0],
  );
