import { describe, expect, it } from 'vitest';
import { createMetrics } from './index.js';
import { requestTimer } from './request-timer.js';

const text = async (m: ReturnType<typeof createMetrics>) =>
  (await m.registry.getSingleMetricAsString('http_request_duration_seconds')).replace(/^# .*\n/gm, '');

describe('requestTimer (the HTTP request histogram, observed without a label string per request)', () => {
  it("records exactly what prom-client's observe records, through a reset and for every bucket", async () => {
    const plain = createMetrics();
    const fast = createMetrics();
    const observe = requestTimer(fast.httpDuration);
    // prom-client's own observe runs once per label set (12 of them) and reset, not once per request.
    let slow = 0;
    const own = fast.httpDuration.observe.bind(fast.httpDuration) as (labels: Record<string, string>, value: number) => void;
    (fast.httpDuration as unknown as { observe: typeof own }).observe = (labels, value) => void (slow++, own(labels, value));
    const routes = [
      ['GET', '/events/:id/queue/status'],
      ['POST', '/events/:id/queue'],
      ['GET', 'unmatched'],
    ] as const;
    // Values on, between and past the bounds (2.5 s is the last: 3 s counts in +Inf only), and every status again.
    const values = [0, 0.001, 0.005, 0.0051, 0.01, 0.2, 0.5, 1, 2.5, 3, 100];
    let n = 0;
    const run = () => {
      for (let i = 0; i < 300; i++) {
        const [method, route] = routes[i % routes.length]!;
        const status = [200, 404, 429, 503][(i >> 2) % 4]!;
        const seconds = values[(i * 7 + n++) % values.length]!;
        plain.httpDuration.observe({ method, route, status: String(status) }, seconds);
        observe(`${method} ${route}`, method, route, status, seconds);
      }
    };
    run();
    expect(await text(fast)).toBe(await text(plain));
    expect(slow).toBe(12);
    expect(await text(fast)).toContain('http_request_duration_seconds_count{method="GET",route="/events/:id/queue/status",status="200"}');
    plain.httpDuration.reset();
    fast.httpDuration.reset();
    run();
    expect(await text(fast)).toBe(await text(plain));
    expect(slow).toBe(24);
  });

  it('keeps one route apart from another of the same path under another method', async () => {
    const m = createMetrics();
    const observe = requestTimer(m.httpDuration);
    for (let i = 0; i < 5; i++) observe('GET /x', 'GET', '/x', 200, 0.001);
    observe('POST /x', 'POST', '/x', 200, 0.001);
    const t = await text(m);
    expect(t).toContain('http_request_duration_seconds_count{method="GET",route="/x",status="200"} 5');
    expect(t).toContain('http_request_duration_seconds_count{method="POST",route="/x",status="200"} 1');
  });
});
