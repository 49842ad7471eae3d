import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '@onsale/shared';
import { TokenError, verifyAdmission, type AdmissionTokenClaims, type CachedTokenVerifier } from '@onsale/shared/queue';
import type { Metrics } from '@onsale/shared/metrics';
import { routeOf } from './route-of.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified admission token of a gated route. */
    admission: AdmissionTokenClaims | null;
  }
}

/**
 * Routes that need no admission token, by name (method and path). Everything else in the store namespace is
 * behind the gate: deny by default, so a route added later is protected unless it is named here.
 */
export const ADMISSION_OPT_OUT = new Set([
  'GET /healthz',
  'GET /metrics',
  'POST /auth/dev-login',
  // The fans' page and its assets, and how fans sign in: before any queue.
  'GET /fan/config',
  'GET /e/:eventId',
  'GET /e/assets/*',
  'GET /events/:id',
  'GET /events/:id/seatmap',
  'GET /events/:id/watermark',
  'GET /events/:id/fairness',
  'POST /events/:id/queue',
  'GET /events/:id/queue/status',
  // Edge workers: the public state they answer polls from, and their reports of admissions (signed, see the route).
  'GET /events/:id/edge-state',
  'POST /edge/claims',
  // Joins an edge sends many to a request (signed; each join passes this gate as the join route it is).
  'POST /edge/joins',
  // Waitlists and offers: after a sell-out there is no queue to pass; a claim token is the admission.
  'GET /listings/:id',
  'PUT /listings/:id/waitlist',
  'DELETE /listings/:id/waitlist',
  'GET /me/waitlist',
  'GET /me/waitlist/matches',
  'GET /me/notifications',
  'POST /me/notifications/read',
  'POST /waitlist/claims',
  'POST /waitlist/offers/:id/decline',
  // Registration lottery: registering and reading come before any admission; a winner's invitation code is
  // what admits them (redeemed for an admission token).
  // Tickets: bought already (an account token), and the door (a scanner token).
  'GET /me/tickets',
  'GET /tickets/:id/code',
  'POST /tickets/:id/device',
  'POST /tickets/:id/transfer',
  'POST /tickets/:id/resale',
  'DELETE /tickets/:id/resale',
  'POST /scan',
  'GET /scan/manifest',
  'POST /scan/uploads',
  'GET /events/:id/lottery',
  'POST /events/:id/lottery/registrations',
  'GET /events/:id/lottery/registration',
  'POST /events/:id/lottery/admission',
]);

/** Routes on an existing hold (see verifyAdmission for what that changes). */
const HOLD_SCOPED = /^\/holds\/:id(\/|$)/;

/**
 * The admission gate: one hook over the whole store namespace. A gated request carries `X-Admission-Token`
 * (or the `admission_token` cookie) and `X-Device-Id`; the token must be genuine, for this event, and bound to
 * the signed-in account and this device. Refusals are counted.
 */
export const admissionGate = fp<{
  tokens: CachedTokenVerifier;
  metrics: Metrics;
  /** @fastify/cookie's parser (app.ts registers the plugin apart from the routes: see there). */
  parseCookie: (header: string) => Record<string, string | undefined>;
}>(
  async (app, { tokens, metrics, parseCookie }) => {
    app.decorateRequest('admission', null);
    // Parsed on first use (cookiesOf below); @fastify/cookie types the field, app.ts keeps its hooks off the routes.
    app.decorateRequest('cookies', null as unknown as FastifyRequest['cookies']);
    // onRequest, right after the account check: a request without admission costs no body parsing or validation.
    // Routes that need no admission (status polls among them) pass without a promise; the rest are checked below.
    app.addHook('onRequest', (req, _reply, done) => {
      const { url: route, key } = routeOf(req);
      if (!route || route.startsWith('/docs') || ADMISSION_OPT_OUT.has(key!)) return done();
      gate(req, route).then(() => done(), done);
    });
    // The request's cookies, parsed on first use (the cookie plugin parses none by itself: see app.ts).
    const cookiesOf = (req: FastifyRequest) => {
      const header = req.headers.cookie;
      return (req.cookies ??= header ? parseCookie(header) : {});
    };
    const gate = async (req: FastifyRequest, route: string) => {
      const token = (req.headers['x-admission-token'] as string | undefined) ?? cookieToken(cookiesOf(req).admission_token);
      if (!token) {
        metrics.requestsWithoutAdmission.inc({ route });
        throw new DomainError(
          'unauthenticated',
          'ADMISSION_REQUIRED',
          'this needs an admission token from the waiting room (X-Admission-Token)',
          { field: 'x-admission-token' },
        );
      }
      const deviceId = req.headers['x-device-id'];
      if (typeof deviceId !== 'string' || deviceId.length < 8)
        throw new DomainError('invalid', 'DEVICE_ID_REQUIRED', 'X-Device-Id is required with an admission token', { field: 'x-device-id' });
      try {
        req.admission = await verifyAdmission(tokens, {
          token,
          accountId: req.accountId,
          deviceId,
          eventId: (req.params as { id?: string }).id,
          ...(HOLD_SCOPED.test(route) ? { holdId: (req.params as { id?: string }).id ?? '' } : {}),
        });
      } catch (e) {
        if (e instanceof TokenError && (e.code === 'TOKEN_WRONG_DEVICE' || e.code === 'TOKEN_WRONG_ACCOUNT'))
          metrics.admissionDeviceMismatch.inc();
        throw e;
      }
    };
  },
  { name: 'admission-gate', dependencies: ['auth'] },
);

/**
 * The admission_token cookie as @fastify/cookie parsed it. A value that is not a token's characters (bad percent
 * encoding is left undecoded, so it shows here) is a malformed Cookie header: 400, never a 500.
 */
function cookieToken(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[A-Za-z0-9_.-]{1,4096}$/.test(value))
    throw new DomainError('invalid', 'MALFORMED_COOKIE', 'the admission_token cookie is not a token', { field: 'cookie.admission_token' });
  return value;
}
