import { randomUUID } from 'node:crypto';
import { type BusState, BusWatch, PULSE_TOPIC } from './busWatch.js';

/** Notices between the instances of one deployment (Redis publish/subscribe, or PostgreSQL LISTEN/NOTIFY). */
export interface Bus {
  /** Calls `handler` with every other instance's notices on `topic`; register before `start()`. */
  on(topic: string, handler: (message: string) => void): Promise<void>;
  /** Subscribes every registered topic and starts pulsing. */
  start(): Promise<void>;
  publish(topic: string, message?: string): void;
  /**
   * True while every notice sent more than the staleness bound ago has surely arrived: every
   * channel is subscribed and this instance's own pulse came back in time. While false, caches
   * use nothing they hold.
   */
  readonly trusted: boolean;
  readonly maxStalenessMs: number;
  state(): BusState;
  /** Called when every channel is subscribed again after a loss: notices of the gap are gone. */
  onResume?: () => void;
  close(): Promise<void>;
}

/**
 * What every bus shares: the instance's id (an instance does not act on its own notices), the
 * handlers by topic (the pulse's among them), the pulse timer and the BusWatch that turns
 * confirmed subscriptions and returning pulses into `trusted`. A transport subscribes, publishes
 * and hands each message it receives to `received`.
 */
export abstract class PulsedBus implements Bus {
  protected readonly instance = randomUUID();
  protected readonly handlers = new Map<string, (message: string) => void>([[PULSE_TOPIC, () => undefined]]);
  protected readonly watch: BusWatch;
  private pulseTimer?: NodeJS.Timeout;
  onResume?: () => void;

  protected constructor(transport: BusState['transport'], maxStalenessMs: number) {
    this.watch = new BusWatch(transport, maxStalenessMs, () => this.handlers.keys());
  }

  abstract on(topic: string, handler: (message: string) => void): Promise<void>;
  abstract start(): Promise<void>;
  abstract publish(topic: string, message?: string): void;
  abstract close(): Promise<void>;

  get trusted(): boolean {
    return this.watch.trusted;
  }

  get maxStalenessMs(): number {
    return this.watch.maxStalenessMs;
  }

  state(): BusState {
    return this.watch.state();
  }

  /** Pulses now and then every pulse interval, until stopPulse. */
  protected startPulse(): void {
    this.pulseTimer ??= setInterval(() => this.pulse(), this.watch.pulseMs);
    this.pulseTimer.unref();
  }

  protected stopPulse(): void {
    clearInterval(this.pulseTimer);
  }

  /** One pulse: the first proof after a (re)subscription need not wait for the timer. */
  protected pulse(): void {
    this.publish(PULSE_TOPIC, this.watch.pulse());
  }

  /** A message on `topic` from `sender`: the watch hears every one, the handler only others'. */
  protected received(topic: string, sender: string, message: string): void {
    const own = sender === this.instance;
    this.watch.heard(topic, sender, own, message);
    if (!own) this.handlers.get(topic)?.(message);
  }
}
