/** A property name a compiled literal may hold: an identifier, and never `__proto__`. */
const PLAIN_NAME = /^[A-Za-z_$][\w$]*$/;

export function plainNames(names: readonly string[]): boolean {
  return names.every((name) => PLAIN_NAME.test(name) && name !== '__proto__');
}

/**
 * A function of `source` answering one object literal whose properties are `names`, in order,
 * each the expression `value(name, i)` writes (in terms of `source` and `helpers`' names).
 *
 * Assigning twenty-odd properties one by one to `{}` leaves V8 a dictionary: each property a hash
 * lookup for whoever reads the object, and ten times the cost to build. A literal gives every
 * object it makes one fast hidden class. Only for `plainNames`: names are written as JSON strings.
 */
export function compileLiteral<S, T>(
  names: readonly string[],
  value: (name: string, index: number) => string,
  helpers: Record<string, unknown> = {},
): (source: S) => T {
  if (!plainNames(names)) throw new Error(`not plain property names: ${names.join(', ')}`);
  const properties = names.map((name, i) => `${JSON.stringify(name)}: ${value(name, i)}`);
  return new Function(
    ...Object.keys(helpers),
    `return function literal(source) { return { ${properties.join(', ')} }; };`,
  )(...Object.values(helpers)) as (source: S) => T;
}

/** compileLiteral where every one of `names` is plain; undefined where one is not (the caller loops instead). */
export function literalIfPlain<S, T>(
  names: readonly string[],
  value: (name: string, index: number) => string,
  helpers?: Record<string, unknown>,
): ((source: S) => T) | undefined {
  return plainNames(names) ? compileLiteral<S, T>(names, value, helpers) : undefined;
}

export type Picker = (doc: Record<string, unknown>) => Record<string, unknown>;

/**
 * A function answering `doc` with exactly `names`, in their order, null where doc has none:
 * compiled for plain names, a loop for any other. Compile once and keep it (per table, per entity).
 */
export function nullFilled(names: readonly string[]): Picker {
  return (
    literalIfPlain<Record<string, unknown>, Record<string, unknown>>(
      names,
      (name) => `source[${JSON.stringify(name)}] ?? null`,
    ) ?? ((doc) => Object.fromEntries(names.map((name) => [name, doc[name] ?? null])))
  );
}

/** Whether `doc` holds every one of `names` (its own or inherited), as `in` says. */
export function holdsAll(doc: object, names: readonly string[]): boolean {
  for (const name of names) if (!(name in doc)) return false;
  return true;
}

/**
 * A function answering the `names` a document holds, in their order, each of `masked` that has a
 * value as `mask` instead: one compiled literal for a document holding every name (a whole
 * record), field by field for any other (a select). Compile once and keep it.
 */
export function fieldPicker(names: readonly string[], masked: ReadonlySet<string> = new Set(), mask?: unknown): Picker {
  const whole = literalIfPlain<Record<string, unknown>, Record<string, unknown>>(
    names,
    (name) => {
      const value = `source[${JSON.stringify(name)}]`;
      return masked.has(name) ? `(${value} == null ? ${value} : mask)` : value;
    },
    { mask },
  );
  return (doc) => {
    if (whole && holdsAll(doc, names)) return whole(doc);
    const out: Record<string, unknown> = {};
    for (const name of names) {
      if (!(name in doc)) continue;
      const value = doc[name];
      out[name] = masked.has(name) && value != null ? mask : value;
    }
    return out;
  };
}
