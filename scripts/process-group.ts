import cluster, { type Worker } from 'node:cluster';

/** One process of the group: what it runs and its name (`store-2`, `worker-1`). */
export interface ProcessSpec {
  role: 'store' | 'worker';
  name: string;
}

interface Member extends ProcessSpec {
  worker: Worker;
  startedAt: number;
  /** Restarts in a row that died within FLAPPING_MS of starting (the backoff grows with them). */
  quickDeaths: number;
  ready: boolean;
}

const FLAPPING_MS = 10_000;

/**
 * The store-API and worker processes of `npm start -- --store-instances N --workers M`, as node:cluster workers of
 * the start command. Store processes call listen() on the same port: the cluster's primary (this process) owns the
 * socket and hands each new connection to the next store process in turn, so no request pays a proxy's extra hop.
 * A process that dies (a crash, `kill -9`) is started again under the same name, after a pause that grows while it
 * keeps dying within seconds; each says it is ready with a message once listening (store) or running (worker).
 */
export class ProcessGroup {
  private readonly members = new Map<string, Member>();
  private stopping = false;

  constructor(private readonly o: { exec: string; env: NodeJS.ProcessEnv; log: (line: string) => void; warn: (line: string) => void }) {
    cluster.setupPrimary({ exec: o.exec, execArgv: process.execArgv, silent: false });
  }

  /** Starts a process; resolves once it is ready, rejects if it exits first. */
  start(spec: ProcessSpec, restarts = 0): Promise<void> {
    // STORE_NODE_OPTIONS / WORKER_NODE_OPTIONS: node flags for the store processes or the workers only
    // (`--cpu-prof --cpu-prof-dir=/tmp/prof` to profile them in a whole run; node refuses --cpu-prof in NODE_OPTIONS).
    // Each fork takes the settings current at its call.
    const flags =
      spec.role === 'store' ? this.o.env.STORE_NODE_OPTIONS : spec.role === 'worker' ? this.o.env.WORKER_NODE_OPTIONS : undefined;
    const extra = (flags ?? '').split(/\s+/).filter(Boolean);
    cluster.setupPrimary({ exec: this.o.exec, execArgv: [...process.execArgv, ...extra], silent: false });
    const worker = cluster.fork({
      ...this.o.env,
      ONSALE_ROLE: spec.role,
      ONSALE_PROCESS: spec.name,
      ...(spec.role === 'store' ? { STORE_API_INSTANCE: spec.name } : {}),
    });
    const member: Member = { ...spec, worker, startedAt: Date.now(), quickDeaths: restarts, ready: false };
    this.members.set(spec.name, member);
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (m: unknown) => {
        if ((m as { ready?: boolean })?.ready && !member.ready) {
          member.ready = true;
          resolve();
        }
      });
      worker.once('exit', (code, signal) => {
        if (!member.ready) reject(new Error(`${spec.name} exited before it was ready (${signal ?? `exit ${code}`})`));
        if (this.stopping || this.members.get(spec.name) !== member) return;
        const quick = Date.now() - member.startedAt < FLAPPING_MS;
        const deaths = quick ? member.quickDeaths + 1 : 0;
        const delayMs = Math.min(30_000, 500 * 2 ** Math.max(0, deaths - 1));
        this.o.warn(
          `${spec.name} (pid ${worker.process.pid}) ${signal ? `was killed (${signal})` : `exited (code ${code})`}: starting it again in ${delayMs / 1000} s`,
        );
        setTimeout(() => {
          if (this.stopping) return;
          this.start(spec, deaths).then(
            () => this.o.log(`${spec.name} running again (pid ${this.members.get(spec.name)?.worker.process.pid})`),
            (e: Error) => void (this.stopping || this.o.warn(e.message)),
          );
        }, delayMs).unref();
      });
    });
  }

  /** Every process's name and pid now. */
  get processes(): { name: string; role: string; pid: number | undefined }[] {
    return [...this.members.values()].map((m) => ({ name: m.name, role: m.role, pid: m.worker.process.pid }));
  }

  /** Stops every process (SIGTERM; SIGKILL after `graceMs`), store processes first, then the workers. */
  async stop(graceMs = 15_000): Promise<void> {
    this.stopping = true;
    for (const role of ['store', 'worker'] as const) {
      await Promise.all(
        [...this.members.values()]
          .filter((m) => m.role === role && !m.worker.isDead())
          .map(
            (m) =>
              new Promise<void>((resolve) => {
                const timer = setTimeout(() => m.worker.process.kill('SIGKILL'), graceMs);
                m.worker.once('exit', () => {
                  clearTimeout(timer);
                  resolve();
                });
                m.worker.process.kill('SIGTERM');
              }),
          ),
      );
    }
  }
}
