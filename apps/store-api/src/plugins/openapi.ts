import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { serviceUnavailableSchema } from '../routes/schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    routeTable: { method: string; url: string }[];
  }
}

/**
 * The server's own route table (`app.routeTable`, for the admission gate's deny-by-default test) and its OpenAPI
 * document (`/docs`, `/docs/json`): registered before the routes, whose every one it sees.
 */
export const openApiPlugin = fp(
  async (app) => {
    // The server's own route table (method + path), for the admission gate's deny-by-default test.
    const routeTable: { method: string; url: string }[] = [];
    app.decorate('routeTable', routeTable);
    app.addHook('onRoute', (route) => {
      // The docs are public pages; everything else is decided by the route's own config.
      if (route.url.startsWith('/docs') || route.url.startsWith('/e/')) route.config = { ...(route.config ?? {}), public: true };
      for (const method of [route.method].flat()) if (method !== 'HEAD') routeTable.push({ method, url: route.url });
      // Every route may answer 503 with Retry-After (a database outage, load shed): the OpenAPI document says so.
      const response = route.schema?.response as Record<string, unknown> | undefined;
      if (response && !('503' in response)) route.schema!.response = { ...response, 503: serviceUnavailableSchema };
    });
    await app.register(swagger, {
      openapi: {
        info: { title: 'Onsale store API', version: '0.1.0', description: 'Fan-facing API: events, holds, checkout.' },
        components: { securitySchemes: { account: { type: 'http', scheme: 'bearer' } } },
        security: [{ account: [] }],
      },
      transform: jsonSchemaTransform,
      // The components: schemas with an id in zod's registry (the error codes).
      transformObject: jsonSchemaTransformObject,
    });
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  },
  { name: 'store-openapi' },
);
