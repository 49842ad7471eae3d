import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';

/** A request part's plain check: true only for data its zod schema accepts unchanged. */
export type Accepts = (data: unknown) => boolean;

/**
 * A validator compiler for the hottest route (the status poll): each part with a plain check (`accepts`) passes
 * data the check accepts as it is, without a zod parse (Fastify keeps its own params and headers objects, whose
 * values are the ones the zod schema would return, since its string rules transform nothing); anything the check
 * does not accept, and every part without one, is validated by the zod schema as on every other route, so a bad
 * request gets the same validation error. The zod schema stays the contract (types, OpenAPI).
 */
export const fastPathValidator =
  (accepts: Partial<Record<'params' | 'headers' | 'querystring' | 'body', Accepts>>): FastifySchemaCompiler<unknown> =>
  (route) => {
    const zod = validatorCompiler(route as Parameters<typeof validatorCompiler>[0]);
    const accept = route.httpPart ? accepts[route.httpPart as keyof typeof accepts] : undefined;
    if (!accept) return zod;
    return (data: unknown) => (accept(data) ? true : zod(data));
  };
