import { describe, expect, it } from 'vitest';
import { modelFromInputs } from '../build.js';
import { emitClient } from './emitClient.js';

const entity = (name: string, plural: string, extra = '') =>
  `version: 1\nname: ${name}\nplural: ${plural}\nbase: owned\n${extra}fields:\n  label: { type: string, required: true }\n  score: { type: int }\n`;

describe('emitClient', () => {
  const model = modelFromInputs({
    entityFiles: [
      { file: 'setCredential.yaml', text: entity('Credential', 'setCredential'), origin: 'app' },
      { file: 'notes.yaml', text: entity('Note', 'notes', 'versioning: simple\n'), origin: 'app' },
    ],
  });
  const client = emitClient(model).get('client.ts')!;

  it('gives each entity the methods its routes have', () => {
    expect(client).toContain(
      `export type NoteClient = Pick<EntityClient<Note, NoteCreate, NoteUpdate, NoteFilters, NoteField, 'score', NoteAggregateFields>, 'aggregate' | 'list' | 'create' | 'bulk' | 'get' | 'update' | 'remove' | 'increment' | 'archive' | 'restore' | 'audit'>;`,
    );
    expect(client).not.toMatch(/NoteClient = .*'versions'/);
  });

  it('moves an entity whose plural is a client member aside instead of clashing', () => {
    expect(client).toContain('setCredentialRecords: CredentialClient;');
    expect(client).toContain("setCredentialRecords: new EntityClient(transport, 'setCredential'),");
    expect(client).toContain('auth: AuthClient;');
  });
});
