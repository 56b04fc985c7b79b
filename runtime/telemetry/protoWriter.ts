/**
 * A protocol-buffers writer over one growing Buffer, for the OTLP messages spans are encoded as.
 * A nested message's length is written in one byte reserved before it and widened (the message
 * moved along) only when the message passes 127 bytes, so nothing is measured twice.
 *
 * Its buffers are never slices of Node's shared pool, so what it wrote can be handed to another
 * thread with its memory (`take`).
 */
export class ProtoWriter {
  buf: Buffer;
  pos = 0;

  constructor(size = 16 * 1024) {
    this.buf = Buffer.allocUnsafeSlow(size);
  }

  /** Room for `bytes` more. */
  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  /** The bytes written so far: a view of the buffer, valid until it is written over. */
  written(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  /**
   * The bytes written so far, with the memory they are in (to transfer to another thread); the
   * writer goes on in a new buffer of the same size, so a batch as large as the last needs no growing.
   */
  take(): Buffer {
    const taken = this.buf.subarray(0, this.pos);
    this.buf = Buffer.allocUnsafeSlow(this.buf.length);
    this.pos = 0;
    return taken;
  }

  /** An unsigned varint; a negative integer as int64's ten-byte two's complement. */
  varint(value: number): void {
    this.ensure(10);
    const buf = this.buf;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        buf[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[this.pos++] = v;
      return;
    }
    let v = value < 0 ? BigInt.asUintN(64, BigInt(value)) : BigInt(value);
    while (v > 0x7fn) {
      buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    buf[this.pos++] = Number(v);
  }

  tag(field: number, wireType: number): void {
    const tag = (field << 3) | wireType;
    if (tag > 0x7f) return this.varint(tag);
    this.ensure(1);
    this.buf[this.pos++] = tag;
  }

  fixed32(field: number, value: number): void {
    this.tag(field, 5);
    this.ensure(4);
    word(this.buf, this.pos, value, true);
    this.pos += 4;
  }

  /** A time in nanoseconds since the epoch, given as whole seconds and the nanoseconds past them. */
  fixed64Time(field: number, seconds: number, nanos: number): void {
    this.tag(field, 1);
    this.ensure(8);
    // seconds * 1e9 exceeds 2^53: split it in 16-bit halves so every product stays exact.
    const lowerSeconds = seconds & 0xffff;
    const upperSeconds = Math.floor(seconds / 0x10000);
    const fromLower = lowerSeconds * 1e9;
    const fromUpper = upperSeconds * 1e9;
    const lowSum = (fromLower >>> 0) + (((fromUpper & 0xffff) * 0x10000) >>> 0) + nanos;
    const low = lowSum >>> 0;
    const high =
      (Math.floor(fromLower / 0x100000000) + Math.floor(fromUpper / 0x10000) + Math.floor(lowSum / 0x100000000)) >>> 0;
    word(this.buf, this.pos, low, true);
    word(this.buf, this.pos + 4, high, true);
    this.pos += 8;
  }

  double(field: number, value: number): void {
    this.tag(field, 1);
    this.ensure(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /** A length-delimited field of two or four 32-bit words, big-endian: a span or trace id. */
  words(field: number, a: number, b: number, c?: number, d?: number): void {
    this.tag(field, 2);
    const length = c === undefined ? 8 : 16;
    this.ensure(1 + length);
    const buf = this.buf;
    const at = this.pos;
    buf[at] = length;
    word(buf, at + 1, a, false);
    word(buf, at + 5, b, false);
    if (c !== undefined) {
      word(buf, at + 9, c, false);
      word(buf, at + 13, d ?? 0, false);
    }
    this.pos = at + 1 + length;
  }

  /** A string field: an ASCII one of under 128 characters is copied here, byte by byte; any other is encoded by Node. */
  string(field: number, value: string): void {
    this.tag(field, 2);
    const length = value.length;
    if (length < 0x80) {
      this.ensure(length + 1);
      const buf = this.buf;
      let at = this.pos + 1;
      let code = 0;
      for (let i = 0; i < length && code < 0x80; i++) {
        code = value.charCodeAt(i);
        buf[at++] = code;
      }
      if (code < 0x80) {
        buf[this.pos] = length;
        this.pos = at;
        return;
      }
    }
    this.ensure(length * 3 + 5);
    const at = this.pos;
    this.pos = at + 1;
    this.pos += this.buf.write(value, this.pos);
    this.close(at);
  }

  bytes(field: number, value: Uint8Array): void {
    this.tag(field, 2);
    this.varint(value.length);
    this.raw(value);
  }

  /** Bytes already encoded (a cached block of fields). */
  raw(value: Uint8Array): void {
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** Opens a nested message; `close` with what it returns once its fields are written. */
  open(field: number): number {
    this.tag(field, 2);
    this.ensure(1);
    return this.pos++;
  }

  /** Writes the length of the message opened at `at`, moving the message along if it needs more than a byte. */
  close(at: number): void {
    const length = this.pos - at - 1;
    if (length < 0x80) {
      this.buf[at] = length;
      return;
    }
    const extra = length < 0x4000 ? 1 : length < 0x200000 ? 2 : length < 0x10000000 ? 3 : 4;
    this.ensure(extra);
    this.buf.copyWithin(at + 1 + extra, at + 1, this.pos);
    let v = length;
    let p = at;
    while (v > 0x7f) {
      this.buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[p] = v;
    this.pos += extra;
  }
}

/** A 32-bit word at `at`, little- or big-endian, without Buffer's argument checks. */
function word(buf: Buffer, at: number, value: number, littleEndian: boolean): void {
  if (littleEndian) {
    buf[at] = value;
    buf[at + 1] = value >>> 8;
    buf[at + 2] = value >>> 16;
    buf[at + 3] = value >>> 24;
  } else {
    buf[at] = value >>> 24;
    buf[at + 1] = value >>> 16;
    buf[at + 2] = value >>> 8;
    buf[at + 3] = value;
  }
}
