import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CompiledValidator, validationDetails } from '../../runtime/model/validationDetails.js';
import { modelFromInputs } from '../build.js';
import { packageEntityFiles } from '../readInputs.js';
import { emitValidators } from './emitValidators.js';

const entity = `
version: 1
name: Post
plural: posts
fields:
  body: { type: string, required: true }
  views: { type: int, default: 0 }
  score: { type: float }
  mood: { type: enum, values: [happy, sad] }
  writer: { type: objectId, ref: users }
  when: { type: isoDate }
  home: { type: url }
  secretNote: { type: string, hidden: true }
  shape: { type: object, properties: { width: { type: float, required: true } } }
`;

type Module = Record<'create' | 'update' | 'increment' | 'bulkItem', CompiledValidator>;
let posts: Module;

beforeAll(async () => {
  const model = modelFromInputs({
    entityFiles: [
      ...packageEntityFiles('builtin', 'builtin'),
      { file: 'entities/posts.yaml', text: entity, origin: 'app' },
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), 'entigen-validators-'));
  for (const [path, text] of emitValidators(model)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  posts = await import(pathToFileURL(join(dir, 'validators/posts.js')).href);
});

function details(validate: CompiledValidator, body: unknown) {
  return validate(body) ? undefined : validationDetails(validate.errors ?? []);
}

describe('generated validators', () => {
  it('accept a valid create body, with content-base fields', () => {
    expect(
      details(posts.create, { title: 'Hello', body: 'x', views: 2, mood: 'sad', when: '2024-05-01T10:00:00Z' }),
    ).toBeUndefined();
  });

  it('report every bad field at once', () => {
    expect(
      details(posts.create, {
        body: 3,
        views: 1.5,
        mood: 'angry',
        writer: 'nope',
        when: '2024-13-01',
        home: 'not a url',
        id: 'abc',
        ownerId: 'x',
        secretNote: 'hidden fields are not writable',
        shape: {},
      }),
    ).toEqual({
      title: 'is required',
      body: 'must be string',
      views: 'must be integer or null',
      mood: 'must be one of happy, sad',
      writer: 'must be an id of 24 hexadecimal characters',
      when: 'must be an ISO 8601 date or date-time',
      home: 'must be an absolute URL',
      id: 'is not allowed',
      ownerId: 'is not allowed',
      secretNote: 'is not allowed',
      'shape.width': 'is required',
    });
  });

  it('make update partial and let optional fields be cleared with null, not required ones', () => {
    expect(details(posts.update, { score: null })).toBeUndefined();
    expect(details(posts.update, { body: null })).toEqual({ body: 'must be string' });
  });

  it('accept macros where a value is resolved at write time', () => {
    expect(
      details(posts.create, { title: 't', body: '{{user.name}}', writer: '{{user.id}}', when: '{{now}}' }),
    ).toBeUndefined();
  });

  it('allow only numeric fields in increment, integers for int', () => {
    expect(details(posts.increment, { views: -2, score: 0.5 })).toBeUndefined();
    expect(details(posts.increment, { views: 0.5 })).toEqual({ views: 'must be integer' });
    expect(details(posts.increment, { views: '1' })).toEqual({ views: 'must be integer' });
    expect(details(posts.increment, { body: 1 })).toEqual({ body: 'is not allowed' });
    expect(details(posts.increment, {})).toEqual({ body: 'must name at least one field' });
  });

  it('validate a bulk item like a create body', () => {
    expect(posts.bulkItem).toBe(posts.create);
  });

  it('report a body that is not an object under "body"', () => {
    expect(details(posts.create, [1, 2])).toEqual({ body: 'must be object' });
  });
});
