import { describe, expect, it } from 'vitest';
import { route } from '../api/route.js';
import { Body, NonBlank, Nullable, Strings, Text, Type } from '../api/schemas.js';
import type { Caller } from '../context/caller.js';
import { ApiError } from '../errors/apiError.js';
import { checkAccess, readBody, readQuery } from './declaredRouter.js';

const example = route({
  method: 'POST',
  path: '/api/v1/examples/{id}',
  operationId: 'examples_change',
  tag: 'examples',
  summary: 'An example',
  access: 'signedIn',
  query: Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
      flag: Type.Optional(Type.Boolean()),
      names: Type.Optional(Strings(5, 20)),
    },
    { additionalProperties: false },
  ),
  body: Body({ label: NonBlank(10), note: Type.Optional(Nullable(Text(5))), tags: Type.Optional(Strings(2, 5)) }),
  response: Type.Object({ ok: Type.Boolean() }),
  errors: [],
});

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('a declared route', () => {
  it('reads query values as the types declared, a single value as a list of one', () => {
    expect(readQuery(example, { limit: '3', flag: 'true', names: 'a' })).toEqual({
      limit: 3,
      flag: true,
      names: ['a'],
    });
    expect(readQuery(example, { names: ['a', 'b'] })).toEqual({ names: ['a', 'b'] });
  });

  it('refuses unknown and mistyped query parameters, every one at once', () => {
    const error = refusal(() => readQuery(example, { limit: '0', sort: 'id', flag: 'maybe' }));
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toEqual({
      limit: 'must be at least 1',
      sort: 'is not a known query parameter (limit, flag, names)',
      flag: 'must be true or false',
    });
  });

  it('reads a body against its schema: unknown fields, blanks, lengths and list sizes', () => {
    const error = refusal(() => readBody(example, { label: '  ', extra: 1, tags: ['a', 'b', 'c'], note: 'too long' }));
    expect(error.details).toEqual({
      label: 'must not be empty',
      extra: 'is not allowed',
      tags: 'must hold at most 2 items',
      note: 'must be at most 5 characters',
    });
    expect(refusal(() => readBody(example, [])).details).toEqual({ body: 'must be a JSON object' });
    expect(refusal(() => readBody(example, {})).details).toEqual({ label: 'is required' });
  });

  it('takes a top-level null as a field left out, unless the field admits null', () => {
    expect(readBody(example, { label: 'x', tags: null, note: null })).toEqual({ label: 'x', note: null });
    expect(refusal(() => readBody(example, { label: null })).details).toEqual({ label: 'is required' });
  });

  it('checks access before anything else: 401 for nobody, 403 without the permission', () => {
    const anonymous = { roles: [], permissions: new Set<string>(), isAdmin: false } as unknown as Caller;
    const member = {
      user: { id: 'u1', email: 'a@b.c' },
      roles: ['USER'],
      permissions: new Set(['articles:view']),
      isAdmin: false,
      credential: { kind: 'session' },
    } as unknown as Caller;
    expect(refusal(() => checkAccess('signedIn', anonymous)).code).toBe('UNAUTHORIZED');
    expect(() => checkAccess('signedIn', member)).not.toThrow();
    expect(refusal(() => checkAccess('admin', member)).code).toBe('FORBIDDEN');
    expect(refusal(() => checkAccess({ permission: 'articles:edit' }, member)).code).toBe('FORBIDDEN');
    expect(() => checkAccess({ permission: 'articles:view' }, member)).not.toThrow();
    expect(() => checkAccess('public', anonymous)).not.toThrow();
  });
});
