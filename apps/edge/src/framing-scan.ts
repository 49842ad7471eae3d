// The framing guard's fast path (framing-guard.ts): most requests a fan sends are a GET or HEAD with a short head and
// no body, or a POST with a plain Content-Length (a join, a hold, a checkout), and most answers workerd sends have a Content-Length. These two scanners recognise exactly those, in one
// pass over the bytes without allocating, and answer "not sure" for anything else; the guard then hands the
// connection's bytes from that message on to Node's own HTTP parser (llhttp, strict), as it did for every byte
// before. A request the fast path accepts is one llhttp accepts too, with the same end: a strict subset of its
// grammar (`framing-scan.test.ts` holds the two to the same decisions), so every refusal llhttp makes is still made.

/** Heads longer than this go to llhttp, which applies its own limit (Node's 16 KB). */
export const FAST_HEAD_MAX = 8192;

/** A POST's Content-Length the fast path takes at most (7 digits); a longer body, or a longer value, goes to llhttp. */
export const FAST_BODY_MAX = 9_999_999;

const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;
const COLON = 58;

/** tchar (RFC 9110): the bytes of a header name. */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TCHAR[c.charCodeAt(0)] = 1;

/** The bytes of an origin-form target the fast path takes (no '#', no space, nothing above 0x7e): llhttp's strict set includes them all. */
const TARGET = new Uint8Array(256);
for (const c of "-._~!$&'()*+,;=:@/?%0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TARGET[c.charCodeAt(0)] = 1;

/** A header value's bytes the fast path takes: visible ASCII, space and tab (no obs-text, no controls). */
const VALUE = new Uint8Array(256);
for (let c = 0x20; c <= 0x7e; c++) VALUE[c] = 1;
VALUE[HTAB] = 1;

const lower = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

/** Whether the name at buf[from, to) is `name` (lower case ASCII), in any case. */
function nameIs(buf: Uint8Array, from: number, to: number, name: string): boolean {
  if (to - from !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (lower(buf[from + i]!) !== name.charCodeAt(i)) return false;
  return true;
}

/** Whether the name at buf[from, to) is `Connection`. */
function connectionHeader(buf: Uint8Array, from: number, to: number): boolean {
  return to - from === 10 && nameIs(buf, from, to, 'connection');
}

/**
 * Whether a `Connection` value at buf[from, to) is `keep-alive` and nothing else (any case, white space before it, none
 * after): what every HTTP/1.1 browser and undici (the rehearsal's crowd) send on every request, and what HTTP/1.1
 * means without it. Any other value (`close`, `upgrade`, a list, white space after) is llhttp's to judge.
 */
function keepAliveOnly(buf: Uint8Array, from: number, to: number): boolean {
  let v = from;
  while (v < to && (buf[v] === SP || buf[v] === HTAB)) v++;
  return nameIs(buf, v, to, 'keep-alive');
}

/**
 * The header names whose meaning is framing (a body's length, the connection's fate, a protocol switch): llhttp's to
 * judge, but for `Connection: keep-alive` (keepAliveOnly).
 */
function framingHeader(buf: Uint8Array, from: number, to: number): boolean {
  switch (to - from) {
    case 7:
      return nameIs(buf, from, to, 'upgrade');
    case 14:
      return nameIs(buf, from, to, 'content-length');
    case 16:
      return nameIs(buf, from, to, 'proxy-connection');
    case 17:
      return nameIs(buf, from, to, 'transfer-encoding');
    default:
      return false;
  }
}

/**
 * A request's Content-Length value at buf[from, to): digits only (1 to 7 of them, so at most FAST_BODY_MAX), with
 * optional white space around them as RFC 9112 allows (spaces and tabs before, spaces after: llhttp, strict, refuses
 * a tab after); -1 for anything else (a sign, a list, junk, an empty value, a tab after, a longer number), which is
 * llhttp's to judge.
 */
function plainLength(buf: Uint8Array, from: number, to: number): number {
  let v = from;
  while (v < to && (buf[v] === SP || buf[v] === HTAB)) v++;
  let n = 0;
  let digits = 0;
  while (v < to && buf[v]! >= 48 && buf[v]! <= 57) {
    if (++digits > 7) return -1;
    n = n * 10 + (buf[v]! - 48);
    v++;
  }
  while (v < to && buf[v] === SP) v++; // llhttp (strict) takes no tab after the digits
  return digits === 0 || v !== to ? -1 : n;
}

/** The method of the last request scanRequest accepted. */
export let scannedMethod: 'GET' | 'HEAD' | 'POST' = 'GET';

/** The body length of the last request scanRequest accepted: a POST's Content-Length, 0 for a GET or HEAD. */
export let scannedBodyLength = 0;

/**
 * A whole request head at buf[at, end): `GET` or `HEAD` without a body, or `POST` with exactly one Content-Length
 * of plain digits (plainLength) and no Transfer-Encoding; an origin-form target, `HTTP/1.1`, CRLF line endings,
 * header names of tchar with the colon right after, values of visible ASCII, space or tab, no other header that
 * bears on framing (Transfer-Encoding, Connection but `Connection: keep-alive`, Proxy-Connection, Upgrade, a
 * Content-Length on a GET or HEAD), the head within FAST_HEAD_MAX. Returns the offset just past the head (its method
 * in scannedMethod, the body's length that follows it in scannedBodyLength), or -1 when the bytes are anything else,
 * including a head not yet whole: llhttp judges those.
 */
export function scanRequest(buf: Uint8Array, at: number, end: number): number {
  const limit = Math.min(end, at + FAST_HEAD_MAX);
  let i = at;
  let post = false;
  // The request line.
  if (i + 4 > limit) return -1;
  if (buf[i] === 71 && buf[i + 1] === 69 && buf[i + 2] === 84 && buf[i + 3] === SP) {
    scannedMethod = 'GET';
    i += 4;
  } else if (i + 5 <= limit && buf[i] === 72 && buf[i + 1] === 69 && buf[i + 2] === 65 && buf[i + 3] === 68 && buf[i + 4] === SP) {
    scannedMethod = 'HEAD';
    i += 5;
  } else if (i + 5 <= limit && buf[i] === 80 && buf[i + 1] === 79 && buf[i + 2] === 83 && buf[i + 3] === 84 && buf[i + 4] === SP) {
    scannedMethod = 'POST';
    post = true;
    i += 5;
  } else return -1;
  if (i >= limit || buf[i] !== 47) return -1; // '/'
  while (i < limit && TARGET[buf[i]!] === 1) i++;
  // " HTTP/1.1\r\n"
  if (
    i + 11 > limit ||
    buf[i] !== SP ||
    buf[i + 1] !== 72 ||
    buf[i + 2] !== 84 ||
    buf[i + 3] !== 84 ||
    buf[i + 4] !== 80 ||
    buf[i + 5] !== 47 ||
    buf[i + 6] !== 49 ||
    buf[i + 7] !== 46 ||
    buf[i + 8] !== 49 ||
    buf[i + 9] !== CR ||
    buf[i + 10] !== LF
  )
    return -1;
  i += 11;
  // The header lines, then the empty line.
  let length = -1;
  for (;;) {
    if (i + 2 > limit) return -1;
    if (buf[i] === CR) {
      if (buf[i + 1] !== LF || post !== length >= 0) return -1; // a POST without a Content-Length is llhttp's
      scannedBodyLength = post ? length : 0;
      return i + 2;
    }
    const name = i;
    while (i < limit && TCHAR[buf[i]!] === 1) i++;
    if (i === name || i >= limit || buf[i] !== COLON) return -1;
    const nameEnd = i;
    // A POST's Content-Length is read below; any other framing header is llhttp's.
    const contentLength = post && nameEnd - name === 14 && nameIs(buf, name, nameEnd, 'content-length');
    if (!contentLength && framingHeader(buf, name, nameEnd)) return -1;
    const connection = connectionHeader(buf, name, nameEnd);
    i++;
    const value = i;
    while (i < limit && VALUE[buf[i]!] === 1) i++;
    if (i + 2 > limit || buf[i] !== CR || buf[i + 1] !== LF) return -1;
    if (connection && !keepAliveOnly(buf, value, i)) return -1;
    if (contentLength) {
      if (length >= 0) return -1; // two of them
      length = plainLength(buf, value, i);
      if (length < 0) return -1;
    }
    i += 2;
  }
}

/** The body length of the last answer scanResponseHead accepted. */
export let scannedLength = 0;

/**
 * The head of an answer at buf[at, end) whose body length it states: `HTTP/1.1` and a status of 200-599 other than
 * 204 and 304, CRLF line endings, exactly one Content-Length of digits and no Transfer-Encoding. Returns the offset
 * just past the head, the body's length in scannedLength (0 for the answer to a HEAD), or -1 for anything else (an
 * answer with a chunked or unbounded body, an interim answer, a head not yet whole): llhttp reads those.
 */
export function scanResponseHead(buf: Uint8Array, at: number, end: number, toHead: boolean): number {
  const limit = Math.min(end, at + FAST_HEAD_MAX);
  let i = at;
  // "HTTP/1.1 NNN"
  if (
    i + 13 > limit ||
    buf[i] !== 72 ||
    buf[i + 1] !== 84 ||
    buf[i + 2] !== 84 ||
    buf[i + 3] !== 80 ||
    buf[i + 4] !== 47 ||
    buf[i + 5] !== 49 ||
    buf[i + 6] !== 46 ||
    buf[i + 7] !== 49 ||
    buf[i + 8] !== SP
  )
    return -1;
  const d0 = buf[i + 9]! - 48;
  const d1 = buf[i + 10]! - 48;
  const d2 = buf[i + 11]! - 48;
  if (d0 < 2 || d0 > 5 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) return -1;
  const status = d0 * 100 + d1 * 10 + d2;
  if (status === 204 || status === 304) return -1;
  i += 12;
  // The reason phrase.
  while (i < limit && buf[i] !== CR && buf[i] !== LF) i++;
  if (i + 2 > limit || buf[i] !== CR || buf[i + 1] !== LF) return -1;
  i += 2;
  let length = -1;
  for (;;) {
    if (i + 2 > limit) return -1;
    if (buf[i] === CR) {
      if (buf[i + 1] !== LF || length < 0) return -1;
      scannedLength = toHead ? 0 : length;
      return i + 2;
    }
    const name = i;
    while (i < limit && TCHAR[buf[i]!] === 1) i++;
    if (i === name || i >= limit || buf[i] !== COLON) return -1;
    const nameEnd = i;
    i++;
    const valueStart = i;
    while (i < limit && VALUE[buf[i]!] === 1) i++;
    if (i + 2 > limit || buf[i] !== CR || buf[i + 1] !== LF) return -1;
    if (nameEnd - name === 14 && nameIs(buf, name, nameEnd, 'content-length')) {
      if (length >= 0) return -1;
      let v = valueStart;
      while (v < i && (buf[v] === SP || buf[v] === HTAB)) v++;
      let n = 0;
      let digits = 0;
      while (v < i && buf[v]! >= 48 && buf[v]! <= 57 && digits < 15) {
        n = n * 10 + (buf[v]! - 48);
        v++;
        digits++;
      }
      while (v < i && (buf[v] === SP || buf[v] === HTAB)) v++;
      if (digits === 0 || v !== i) return -1;
      length = n;
    } else if (nameEnd - name === 17 && nameIs(buf, name, nameEnd, 'transfer-encoding')) return -1;
    i += 2;
  }
}
