import { describe, expect, it } from 'vitest';
import { BusWatch, PULSE_TOPIC } from './busWatch.js';

function watch(topics = ['events', 'credentials', PULSE_TOPIC]) {
  let now = 1000;
  const bus = new BusWatch(
    'redis',
    1000,
    () => topics,
    () => now,
  );
  const at = (ms: number) => {
    now = ms;
  };
  return { bus, at, topics };
}

describe('BusWatch', () => {
  it('vouches only once every channel is subscribed and its own pulse came back', () => {
    const { bus, at } = watch();
    expect(bus.trusted).toBe(false);
    bus.confirmSubscribed('events');
    bus.confirmSubscribed(PULSE_TOPIC);
    const early = bus.pulse();
    at(1010);
    bus.heard(PULSE_TOPIC, 'me', true, early);
    // 'credentials' was not subscribed yet: that pulse proves nothing.
    expect(bus.trusted).toBe(false);
    expect(bus.confirmSubscribed('credentials')).toBe(true);
    bus.heard(PULSE_TOPIC, 'me', true, early);
    // Sent before the last subscription held: still nothing.
    expect(bus.trusted).toBe(false);
    const pulse = bus.pulse();
    at(1020);
    bus.heard(PULSE_TOPIC, 'me', true, pulse);
    expect(bus.trusted).toBe(true);
    expect(bus.state()).toMatchObject({ up: true, stalenessMs: 10 });
  });

  it('stops vouching when the proof is older than the bound, or at once when the connection is lost', () => {
    const { bus, at } = watch();
    for (const topic of ['events', 'credentials', PULSE_TOPIC]) bus.confirmSubscribed(topic);
    at(2000);
    bus.heard(PULSE_TOPIC, 'me', true, bus.pulse());
    at(3000);
    expect(bus.trusted).toBe(true);
    at(3001);
    expect(bus.trusted).toBe(false);
    expect(bus.state().stalenessMs).toBe(1001);
    bus.heard(PULSE_TOPIC, 'me', true, bus.pulse());
    expect(bus.trusted).toBe(true);
    bus.lost();
    expect(bus.trusted).toBe(false);
    expect(bus.state().channels.events.subscribed).toBe(false);
  });

  it('counts peers by their pulses and ages each channel by its last message', () => {
    const { bus, at } = watch();
    bus.heard(PULSE_TOPIC, 'other-1', false, '5');
    bus.heard(PULSE_TOPIC, 'other-2', false, '5');
    bus.heard('events', 'other-1', false, '17');
    at(1500);
    const state = bus.state();
    expect(state.peers).toBe(2);
    expect(state.channels.events.lastMessageAgeMs).toBe(500);
    expect(state.channels.credentials.lastMessageAgeMs).toBeNull();
    // A peer silent for many pulses is gone.
    at(1000 + bus.pulseMs * 9);
    expect(bus.state().peers).toBe(0);
  });
});
