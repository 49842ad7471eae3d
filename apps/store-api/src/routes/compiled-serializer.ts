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

/**
 * As compiledSerializer, and a 200 answer object is written once: the same object answered again (a cached view that
 * every fan reads until it is rebuilt, such as the seat map) gets the text written the first time. Only for routes
 * whose 200 answers are never changed after they are first answered; the text is kept as long as the object is.
 */
export const onceSerializer = (route: { schema: unknown; httpStatus?: string }): ((data: unknown) => string) => {
  const write = compiledSerializer(route);
  if (route.httpStatus !== '200') return write;
  const written = new WeakMap<object, string>();
  return (data) => {
    if (typeof data !== 'object' || data === null) return write(data);
    let text = written.get(data);
    if (text === undefined) {
      text = write(data);
      written.set(data, text);
    }
    return text;
  };
};
