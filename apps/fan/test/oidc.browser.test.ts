import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { sql } from '@onsale/shared/db';
import { builtFanPage, docsShots, fanPage, launch, makeEvent, startStack, WIDTHS, type Stack } from './harness';
import { startTestProvider, type TestProvider } from './oidc-provider';

// Sign-in with the promoter's identity provider from the page: the OpenID Connect authorization code flow with
// PKCE against a tiny local provider (its own RS256 key), the page back on /e/callback, then on the event's page
// signed in as the provider's subject, its ID token the account token that the store API verifies against the
// provider's key set (AUTH_JWKS_URL): the fan joins the line as that subject.

let stack: Stack;
let provider: TestProvider;
let browser: Browser;
let storeUrl: string;

beforeAll(async () => {
  provider = await startTestProvider({ clientId: 'fan-page', user: { sub: 'idp|ana-4711', name: 'Ana Fan' } });
  stack = await startStack(await builtFanPage());
  storeUrl = (
    await stack.extraApi({
      FAN_OIDC_ISSUER: provider.issuer,
      FAN_OIDC_CLIENT_ID: 'fan-page',
      DEV_AUTH: 'false',
      AUTH_JWKS_URL: `${provider.issuer}/jwks`,
      AUTH_ISSUER: provider.issuer,
      AUTH_AUDIENCE: 'fan-page',
    })
  ).url;
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await provider?.close();
});

describe("sign-in with the promoter's identity provider", () => {
  it('runs the authorization code flow with PKCE, comes back to the event signed in as the provider’s subject, and joins the line', async () => {
    const eventId = await makeEvent(stack.t, { name: 'Provider Night' });
    const { page, errors, context } = await fanPage(browser, WIDTHS.phone);
    await page.goto(`${storeUrl}/e/${eventId}`);
    await page.getByTestId('sign-in').waitFor();
    // The development sign-in is off on this store API: only the provider's button.
    expect(await page.getByTestId('dev-sign-in').count()).toBe(0);
    const joinRequest = page.waitForRequest((r) => r.url().endsWith(`/events/${eventId}/queue`) && r.method() === 'POST');
    await page.getByTestId('oidc-sign-in').click();
    const request = await joinRequest;

    const auth = provider.authorizations.at(-1)!;
    expect(auth.get('code_challenge_method')).toBe('S256');
    expect(auth.get('redirect_uri')).toBe(`${storeUrl}/e/callback`);
    expect(auth.get('scope')).toBe('openid profile');
    expect(provider.issued).toHaveLength(1);
    expect(request.headers().authorization).toBe(`Bearer ${provider.issued[0]!.idToken}`);
    expect(new URL(page.url()).pathname).toBe(`/e/${eventId}`);
    expect(new URL(page.url()).search).toBe('');
    await page.getByTestId('queue-card').waitFor();
    expect(await page.getByTestId('signed-in-as').textContent()).toBe('Signed in as Ana Fan');
    const entries = await sql<{ account_id: string }>`SELECT account_id FROM queue_entries WHERE event_id = ${eventId}`.execute(stack.t.db);
    expect(entries.rows).toEqual([{ account_id: 'idp|ana-4711' }]);
    await page.screenshot({ path: join(docsShots, 'signed-in-with-provider-phone.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  });
});
