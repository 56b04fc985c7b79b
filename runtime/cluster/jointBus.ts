import type { Bus } from './bus.js';
import type { BusState } from './busWatch.js';

/**
 * Redis beside PostgreSQL: the instances' notices ride Redis, and the database's changes made
 * outside the servers arrive on the schema's change channel (a PgBus of changes only). Caches
 * may trust what they hold only while both can vouch for their notices; the health report shows
 * Redis's channels with the change channel among them.
 */
export class JointBus implements Bus {
  private resume?: () => void;

  constructor(
    private readonly notices: Bus,
    private readonly changes: Bus,
    /** The topics that the change bus carries. */
    private readonly changeTopics: ReadonlySet<string>,
  ) {}

  on(topic: string, handler: (message: string) => void): Promise<void> {
    return (this.changeTopics.has(topic) ? this.changes : this.notices).on(topic, handler);
  }

  async start(): Promise<void> {
    await Promise.all([this.notices.start(), this.changes.start()]);
  }

  publish(topic: string, message?: string): void {
    this.notices.publish(topic, message);
  }

  get trusted(): boolean {
    return this.notices.trusted && this.changes.trusted;
  }

  get maxStalenessMs(): number {
    return this.notices.maxStalenessMs;
  }

  get onResume(): (() => void) | undefined {
    return this.resume;
  }

  set onResume(resume: (() => void) | undefined) {
    this.resume = resume;
    this.notices.onResume = resume;
    this.changes.onResume = resume;
  }

  state(): BusState {
    const notices = this.notices.state();
    const changes = this.changes.state();
    const channels = { ...notices.channels };
    for (const topic of this.changeTopics) if (changes.channels[topic]) channels[topic] = changes.channels[topic];
    const ages = [notices.stalenessMs, changes.stalenessMs];
    return {
      ...notices,
      up: notices.up && changes.up,
      stalenessMs: ages.includes(null) ? null : Math.max(...(ages as number[])),
      channels,
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.notices.close(), this.changes.close()]);
  }
}
