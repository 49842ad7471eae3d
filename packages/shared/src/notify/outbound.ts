import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, request, type Dispatcher } from 'undici';
import { z } from 'zod';

// Where the product's own requests may go: webhooks and alert receivers are URLs an operator types, and the worker
// posts to them from inside the install's network. Left open, one of them pointed at 169.254.169.254, 10.0.0.1 or
// localhost reads the cloud's metadata service, the database's port or the store API from the inside (server-side
// request forgery). So only public unicast addresses are reached by default, whatever the spelling of the address
// (URL parsing turns 2130706433, 0x7f.1 and 0177.0.0.1 into 127.0.0.1; IPv4-mapped IPv6 counts as its IPv4), and
// the check runs on the address actually connected to, after DNS, inside the HTTP client's connector: a name that
// resolves to an internal address is refused too, and a name that changes its answer between the check and the
// request (DNS rebinding) is checked again on the answer used. Redirects are never followed. The install names the
// internal receivers it wants (WEBHOOK_ALLOW_HOSTS).

/** The setting that names internal receivers the install allows, in every refusal's words. */
export const ALLOW_HOSTS_SETTING = 'WEBHOOK_ALLOW_HOSTS';

/** A name's addresses, as `dns.lookup(name, { all: true })` answers. Tests inject a stand-in resolver. */
export type ResolveHost = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

/** Where outbound requests may go. */
export interface OutboundPolicy {
  /**
   * Internal receivers the install allows: host names (matched exactly, case-insensitively: the name in the URL,
   * whatever it resolves to), IP addresses, or CIDR ranges (the address connected to).
   */
  allowHosts: readonly string[];
  /** The resolver (default: the system's, `dns.lookup`). */
  resolve?: ResolveHost;
}

/** Safe by default: public unicast addresses only. */
export const DEFAULT_OUTBOUND_POLICY: OutboundPolicy = Object.freeze({ allowHosts: Object.freeze([]) });

const systemResolve: ResolveHost = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** What ipaddr.js calls a range, in an operator's words. Only `unicast` is reachable without the allow-list. */
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (the cloud metadata service lives there)',
  loopback: 'a loopback address (this machine)',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private network address',
  uniqueLocal: 'a unique-local (private) IPv6 address',
  reserved: 'a reserved address',
  ipv4Mapped: 'an IPv4-mapped address',
  rfc6145: 'an IPv4-translated address',
  rfc6052: 'a NAT64 address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
};

/** Names that are internal whatever DNS says of them (RFC 6761 and 6762, ICANN's .internal, cloud metadata names). */
const INTERNAL_SUFFIXES = ['.localhost', '.internal', '.local', '.home.arpa', '.localdomain'];
const INTERNAL_NAMES = new Set(['localhost', 'metadata.goog', 'metadata.google.internal', 'instance-data']);

const bare = (host: string) =>
  host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');

type Allowed = { names: Set<string>; ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> };

/** The allow-list, parsed once per policy. */
const allowedCache = new WeakMap<OutboundPolicy, Allowed>();
function allowedOf(policy: OutboundPolicy): Allowed {
  let a = allowedCache.get(policy);
  if (a) return a;
  a = { names: new Set(), ranges: [] };
  for (const raw of policy.allowHosts) {
    const entry = bare(raw);
    if (entry === '') continue;
    if (entry.includes('/') && ipaddr.isValidCIDR(entry)) {
      const [addr, bits] = ipaddr.parseCIDR(entry);
      a.ranges.push(
        addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()
          ? [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96]
          : [addr, bits],
      );
    } else if (ipaddr.isValid(entry)) {
      const addr = ipaddr.process(entry);
      a.ranges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else a.names.add(entry);
  }
  allowedCache.set(policy, a);
  return a;
}

/** Checks the entries of WEBHOOK_ALLOW_HOSTS: host names, IP addresses, CIDR ranges. */
const allowEntry = z
  .string()
  .refine(
    (e) =>
      ipaddr.isValid(bare(e)) ||
      (bare(e).includes('/') && ipaddr.isValidCIDR(bare(e))) ||
      /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(bare(e)),
    { error: 'each entry must be a host name, an IP address or a CIDR range (e.g. hooks.corp, 10.0.0.5, 10.1.0.0/16)' },
  )
  .refine((e) => !opensMetadata(bare(e)), {
    error: 'an entry may not open the cloud metadata service (169.254.169.254, fd00:ec2::254, metadata.google.internal)',
  })
  .refine((e) => !tooWide(bare(e)), { error: 'a CIDR range may be at most a /8 (IPv4) or a /32 (IPv6): name the receivers instead' });

/** The cloud metadata services' addresses and names: no receiver lives there, so no allow-list entry may open them. */
const METADATA = ['169.254.169.254', 'fd00:ec2::254'].map((a) => ipaddr.process(a));
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data']);

function opensMetadata(entry: string): boolean {
  if (METADATA_NAMES.has(entry)) return true;
  const range =
    entry.includes('/') && ipaddr.isValidCIDR(entry)
      ? ipaddr.parseCIDR(entry)
      : ipaddr.isValid(entry)
        ? ([ipaddr.process(entry), 128] as const)
        : null;
  if (!range) return false;
  const [net, bits] = range;
  const base =
    net.kind() === 'ipv6' && (net as ipaddr.IPv6).isIPv4MappedAddress()
      ? ([(net as ipaddr.IPv6).toIPv4Address(), bits - 96] as const)
      : ([net, net.kind() === 'ipv4' ? Math.min(bits, 32) : bits] as const);
  return METADATA.some((m) => m.kind() === base[0].kind() && m.match(base[0], base[1]));
}

function tooWide(entry: string): boolean {
  if (!entry.includes('/') || !ipaddr.isValidCIDR(entry)) return false;
  const [net, bits] = ipaddr.parseCIDR(entry);
  if (net.kind() === 'ipv6' && (net as ipaddr.IPv6).isIPv4MappedAddress()) return bits - 96 < 8;
  return net.kind() === 'ipv4' ? bits < 8 : bits < 32;
}

/** The env shape of the setting, for every app that makes or registers outbound requests (worker, BFF, CLI). */
export const outboundEnvShape = {
  [ALLOW_HOSTS_SETTING]: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    )
    .pipe(z.array(allowEntry)),
};

/** The policy from the checked setting. */
export function outboundPolicyOf(env: { [ALLOW_HOSTS_SETTING]: string[] }): OutboundPolicy {
  return env[ALLOW_HOSTS_SETTING].length === 0 ? DEFAULT_OUTBOUND_POLICY : { allowHosts: env[ALLOW_HOSTS_SETTING] };
}

/** The policy from an environment (WEBHOOK_ALLOW_HOSTS), for the processes that read no other setting of this kind. */
export function outboundPolicyFromEnv(env: Record<string, string | undefined> = process.env): OutboundPolicy {
  const parsed = z.object(outboundEnvShape).safeParse(env);
  if (!parsed.success) throw new Error(`invalid ${ALLOW_HOSTS_SETTING}: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  return outboundPolicyOf(parsed.data);
}

const inAllowedRange = (addr: ipaddr.IPv4 | ipaddr.IPv6, allowed: Allowed) =>
  allowed.ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));

/**
 * Why an address may not be reached (in words), or null when it may: public unicast, or within the allow-list's
 * addresses and ranges. Anything that does not parse as an address is refused.
 */
export function refusedAddress(address: string, policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY): string | null {
  const host = bare(address);
  if (!ipaddr.isValid(host)) return `${address} is not an IP address`;
  const addr = ipaddr.process(host);
  if (inAllowedRange(addr, allowedOf(policy))) return null;
  const range = addr.range();
  if (range === 'unicast') return null;
  return `${addr.toString()} is ${RANGE_WORDS[range] ?? `a special-purpose address (${range})`}`;
}

/** Whether the URL's host is allowed by name (the allow-list's names). */
const allowedByName = (hostname: string, policy: OutboundPolicy) => allowedOf(policy).names.has(bare(hostname));

/** Why a name is internal whatever it resolves to (localhost, *.internal, a single label...), or null. */
function internalName(hostname: string): string | null {
  const h = bare(hostname);
  if (INTERNAL_NAMES.has(h) || INTERNAL_SUFFIXES.some((s) => h.endsWith(s)))
    return `${h} is an internal name (${h === 'localhost' || h.endsWith('.localhost') ? 'this machine' : 'a private network or the cloud metadata service'})`;
  if (!h.includes('.')) return `${h} is a name without a domain (an internal host)`;
  return null;
}

const advice = `; receivers on internal addresses must be named in ${ALLOW_HOSTS_SETTING}`;

/**
 * Why a receiver URL may not be used, or null. At registration: the host (an address in any spelling, or a name
 * and every address it resolves to now). A name that does not resolve yet is accepted: every delivery checks the
 * address it connects to.
 */
export async function refusedReceiverUrl(url: string, policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY): Promise<string | null> {
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch {
    return 'not a URL';
  }
  const host = bare(hostname);
  if (isIP(host)) {
    const why = refusedAddress(host, policy);
    return why && `${why}${advice}`;
  }
  if (allowedByName(host, policy)) return null;
  const named = internalName(host);
  if (named) return `${named}${advice}`;
  let addresses: ReadonlyArray<{ address: string }>;
  try {
    addresses = await withTimeout((policy.resolve ?? systemResolve)(host), 3000);
  } catch {
    return null;
  }
  for (const { address } of addresses) {
    const why = refusedAddress(address, policy);
    if (why) return `${host} resolves to ${why.replace(/^\S+ is /, `${bare(address)}, `)}${advice}`;
  }
  return null;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), ms);
    }),
  ]);
}

/** A request refused before it was made: the receiver's address is internal (the message says which and why). */
export class OutboundRefusedError extends Error {
  override name = 'OutboundRefusedError';
  readonly code = 'ERR_OUTBOUND_REFUSED';
}

/**
 * The connector's lookup: resolves with the policy's resolver, and refuses the connection when the name is
 * internal or any address it resolves to is (unless the name is allowed), so what is connected to is what was checked.
 */
function checkedLookup(policy: OutboundPolicy): LookupFunction {
  const resolve = policy.resolve ?? systemResolve;
  return (hostname, options, callback) => {
    const cb = callback as (err: NodeJS.ErrnoException | null, address: unknown, family?: number) => void;
    const byName = allowedByName(hostname, policy);
    const named = byName ? null : internalName(hostname);
    if (named) return cb(new OutboundRefusedError(`${named}${advice}`), undefined);
    resolve(hostname).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (wanted.length === 0) return cb(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), undefined);
        if (!byName)
          for (const a of wanted) {
            const why = refusedAddress(a.address, policy);
            if (why)
              return cb(
                new OutboundRefusedError(`${hostname} resolves to ${why.replace(/^\S+ is /, `${a.address}, `)}${advice}`),
                undefined,
              );
          }
        if (options.all)
          cb(
            null,
            wanted.map((a) => ({ address: a.address, family: a.family })),
          );
        else cb(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => cb(err, undefined),
    );
  };
}

/**
 * An undici dispatcher that connects only where the policy allows: an address in the URL is checked before the
 * connection, a name through the checked lookup, and the socket's remote address once more after it connects.
 */
export function outboundDispatcher(policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY): Dispatcher {
  const inner = buildConnector({ lookup: checkedLookup(policy) });
  const connect: buildConnector.connector = (opts, callback) => {
    const host = bare(opts.hostname);
    if (isIP(host)) {
      const why = allowedByName(host, policy) ? null : refusedAddress(host, policy);
      if (why) return callback(new OutboundRefusedError(`${why}${advice}`), null);
    }
    return inner(opts, (err, socket) => {
      if (err || !socket) return callback(err, null);
      const remote = socket.remoteAddress;
      const why = remote && !allowedByName(opts.hostname, policy) ? refusedAddress(remote, policy) : null;
      if (why) {
        socket.destroy();
        return callback(new OutboundRefusedError(`${opts.hostname} connected to ${why.replace(/^\S+ is /, `${remote}, `)}${advice}`), null);
      }
      callback(null, socket);
    });
  };
  return new Agent({ connect, keepAliveTimeout: 10_000 });
}

/** How one outbound POST went: the status and how long it took, never the receiver's body. */
export type PostOutcome =
  { ok: true; statusCode: number; ms: number } | { ok: false; statusCode: number | null; ms: number; error: string; refused: boolean };

const refusalIn = (e: unknown): OutboundRefusedError | undefined => {
  for (let c = e as { cause?: unknown } | undefined, i = 0; c && i < 5; c = c.cause as { cause?: unknown } | undefined, i++)
    if (c instanceof OutboundRefusedError) return c;
  return undefined;
};

/**
 * One POST through a checked dispatcher, timed. Redirects are not followed (a receiver that moved is a
 * misconfiguration to fix, and following would send the signed body wherever it points). The body of the answer
 * is discarded unread: an operator sees the status and the time, and a receiver (or an internal service) cannot
 * echo anything back through the console. The timeout covers the whole exchange.
 */
export async function postOutbound(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { dispatcher: Dispatcher; timeoutMs: number; signal?: AbortSignal; now?: () => number },
): Promise<PostOutcome> {
  const now = opts.now ?? (() => performance.now());
  const started = now();
  const ms = () => Math.round(now() - started);
  const signal = opts.signal ? AbortSignal.any([AbortSignal.timeout(opts.timeoutMs), opts.signal]) : AbortSignal.timeout(opts.timeoutMs);
  try {
    const res = await request(url, { method: 'POST', headers, body, signal, dispatcher: opts.dispatcher });
    // Ignored on purpose: The answer's status is what counts; its body is only drained so the socket can be reused (a body cut off mid-way changes nothing).
    await res.body.dump().catch(() => {});
    const took = ms();
    if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, statusCode: res.statusCode, ms: took };
    const moved = res.statusCode >= 300 && res.statusCode < 400 ? ' (a redirect: not followed; register the final URL)' : '';
    return { ok: false, statusCode: res.statusCode, ms: took, error: `HTTP ${res.statusCode} after ${took} ms${moved}`, refused: false };
  } catch (e) {
    const took = ms();
    const refusal = refusalIn(e);
    if (refusal) return { ok: false, statusCode: null, ms: took, error: `refused, no request made: ${refusal.message}`, refused: true };
    return { ok: false, statusCode: null, ms: took, error: describeError(e, opts.timeoutMs, took), refused: false };
  }
}

/** Why a request failed, in words an operator can act on. */
function describeError(e: unknown, timeoutMs: number, took: number): string {
  const err = e as { name?: string; code?: string; message?: string; cause?: { name?: string; code?: string; message?: string } };
  if (err?.name === 'TimeoutError' || err?.cause?.name === 'TimeoutError') return `timeout: no answer within ${timeoutMs} ms`;
  if (err?.name === 'AbortError' || err?.cause?.name === 'AbortError') return 'aborted: the worker is shutting down';
  const cause = err?.code ?? err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
  return `network error after ${took} ms: ${cause}`;
}
