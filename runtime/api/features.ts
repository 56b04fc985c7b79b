import type { Static } from '@sinclair/typebox';
import { BATCH_OPS, MAX_BATCH_OPERATIONS } from '../model/batch.js';
import { MEDIA_ASSETS, SCHEDULED_JOBS } from '../model/collections.js';
import { OBJECT_ID_PATTERN } from '../model/patterns.js';
import { THUMBNAIL_FITS } from '../model/thumbnails.js';
import type { AppModel } from '../model/types.js';
import type { FieldChange } from './components.js';
import { entityRouteTable } from './entityRoutes.js';
import { ACCESS_ERRORS, INPUT_ERRORS, route } from './route.js';
import { Body, Component, Data, Enum, NonBlank, Text, Type } from './schemas.js';

// The routes of the built-in features: the approvals queue, realtime, search, jobs, media and
// webhooks. Each is there when the app has the feature or entity it serves.

const INPUT = INPUT_ERRORS;
const ADMIN = ACCESS_ERRORS;
const CURSOR = Text(500);
const hasPublic = (plural: string) => (model: AppModel) =>
  model.entities.some((e) => e.plural === plural && !e.internal);

/** Some entity the app exposes tracks changes of a field (the approvals queue). */
export const tracksChanges = (model: AppModel) =>
  model.entities.some((e) => !e.internal && e.fields.some((f) => f.trackChanges));

const FIELD_CHANGE_STATUSES = ['pending', 'approved', 'rejected'] as const;

function queueQuery(entity: ReturnType<typeof Text> | ReturnType<typeof Enum>) {
  return Type.Object(
    {
      entity: Type.Optional(entity),
      approvalStatus: Type.Optional(Enum(FIELD_CHANGE_STATUSES)),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
      cursor: Type.Optional(CURSOR),
    },
    { additionalProperties: false },
  );
}

export const fieldChangeQueue = route({
  method: 'GET',
  path: '/api/v1/field-changes',
  operationId: 'fieldChanges_queue',
  tag: 'history',
  access: 'admin',
  when: tracksChanges,
  summary: 'The approvals queue: changes of tracked fields across every entity, newest first (admin)',
  description: 'Decide one with PUT /api/v1/{plural}/{id}/field-changes/{changeId}.',
  query: queueQuery(Text(100)),
  forModel: (model) => ({
    query: queueQuery(
      Enum(
        model.entities.filter((e) => !e.internal && e.fields.some((f) => f.trackChanges)).map((e) => e.plural),
        { description: 'An entity with tracked fields' },
      ),
    ),
  }),
  response: Type.Object({
    items: Type.Array(
      Type.Intersect([Component<Static<typeof FieldChange>>('FieldChange'), Type.Object({ entity: Type.String() })]),
    ),
    total: Type.Integer(),
    hasMore: Type.Boolean(),
    nextCursor: Type.Optional(Type.String()),
  }),
  errors: [...ADMIN, 'VALIDATION_ERROR'],
});

/** Names, repeated (`entities=a&entities=b`) or comma-separated in one value (`entities=a,b`). */
const names = (description: string) =>
  Type.Array(Text(2000, { minLength: 1 }), { minItems: 1, maxItems: 100, description });

function realtimeQuery(plurals: string) {
  return Type.Object(
    {
      entities: names(`Entity plurals, comma-separated or repeated${plurals}`),
      includeArchived: Type.Optional(
        Type.Boolean({ default: false, description: 'true: archived records stay in view (as with lists)' }),
      ),
      select: Type.Optional(names('Fields to send besides id, comma-separated (default: every field GET shows)')),
      tenant: Type.Optional(
        Type.String({
          maxLength: 24,
          pattern: OBJECT_ID_PATTERN,
          description: 'The tenant to narrow to, for clients that cannot send x-tenant-id (EventSource)',
        }),
      ),
      lastEventId: Type.Optional(
        Type.Integer({ minimum: 0, description: 'Resume after this event (the Last-Event-ID header wins)' }),
      ),
    },
    { additionalProperties: false },
  );
}

export const realtime = route({
  method: 'GET',
  path: '/api/v1/realtime',
  operationId: 'realtime',
  tag: 'realtime',
  access: 'optional',
  tenantScoped: true,
  summary: 'Server-Sent Events: the changes to the named entities that you may see, as they commit',
  description:
    'Each change to the named entities that you could see in their lists at that moment, in log order; resume with Last-Event-ID.',
  query: realtimeQuery(''),
  headers: Type.Object({
    'Last-Event-ID': Type.Optional(
      Type.String({
        pattern: '^[0-9]+$',
        description: 'Resume after this event: every later event you may see is sent first, in order',
      }),
    ),
  }),
  forModel: (model) => ({
    query: realtimeQuery(
      `: ${model.entities
        .filter((e) => entityRouteTable(e).some(([, , route]) => route === 'list'))
        .map((e) => e.plural)
        .join(', ')}`,
    ),
  }),
  response: Type.String(),
  responseType: 'event-stream',
  responseDescription: [
    'A text/event-stream. Each event: `id:` the log sequence number, `event:` `<plural>.<created|updated|deleted|archived|restored|incremented|reverted>`,',
    '`data:` the record as GET shows it to you (for deletes `{ "id" }`). A record that leaves your view sends `<plural>.deleted` with',
    '`{ "id", "reason": "hidden" }` (an archive: `<plural>.archived` with `{ "id" }`). Comment lines are heartbeats. The event',
    '`stream.error` with `{ "error": { "code", "message" } }` ends the stream: EVENTS_EXPIRED (reload, then subscribe without',
    'Last-Event-ID), UNAUTHORIZED (the session ended or the key was revoked).',
  ].join(' '),
  errors: ['VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMITED'],
});

export const SearchHit = Type.Object({
  entity: Type.String(),
  id: Type.String(),
  title: Type.String(),
  snippet: Type.String(),
});

export const search = route({
  method: 'GET',
  path: '/api/v1/search',
  operationId: 'search',
  tag: 'search',
  access: 'optional',
  when: (model) => model.features.includes('search'),
  summary: 'Search every entity you may view, ranked, with snippets',
  query: Type.Object(
    {
      q: NonBlank(200, { description: 'terms, each matched as a word prefix' }),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    },
    { additionalProperties: false },
  ),
  response: Data(Type.Object({ items: Type.Array(SearchHit), totalCount: Type.Integer() })),
  errors: ['VALIDATION_ERROR'],
  client: {
    group: 'root',
    name: 'search',
    unwrap: true,
    positional: true,
    doc: 'Every entity the caller may view, ranked, with snippets.',
  },
});

export const runJob = route({
  method: 'POST',
  path: '/api/v1/scheduledJobs/{id}/run',
  operationId: 'scheduledJobs_run',
  tag: 'scheduledJobs',
  access: 'admin',
  when: hasPublic(SCHEDULED_JOBS),
  summary: 'Run a job now (admin); answers the started execution',
  status: 202,
  response: Data(Component('JobExecution')),
  errors: [...ADMIN, 'NOT_FOUND', 'UNPROCESSABLE_ENTITY'],
});

export const upload = route({
  method: 'POST',
  path: '/api/v1/mediaAssets/upload',
  operationId: 'mediaAssets_upload',
  tag: 'mediaAssets',
  // The entity's create rule decides, and it may grant uploads to callers without an account.
  access: 'optional',
  when: hasPublic(MEDIA_ASSETS),
  summary: 'Upload a file and create its MediaAsset',
  description: 'Multipart: the part `file`, and optionally altText, width, height and filename.',
  // Read part by part as it streams in (mediaRoutes.ts), with these bounds.
  body: Type.Object({
    file: Type.String({ contentMediaType: 'application/octet-stream' }),
    altText: Type.Optional(Text(1000)),
    width: Type.Optional(Text(10)),
    height: Type.Optional(Text(10)),
    filename: Type.Optional(Text(255)),
  }),
  bodyType: 'multipart',
  status: 201,
  response: Data(Component('MediaAsset')),
  errors: [...ADMIN, ...INPUT, 'UNPROCESSABLE_ENTITY'],
});

export const mediaFile = route({
  method: 'GET',
  path: '/api/v1/mediaAssets/{id}/file',
  operationId: 'mediaAssets_file',
  tag: 'mediaAssets',
  access: 'optional',
  when: hasPublic(MEDIA_ASSETS),
  summary: 'The stored file of a media asset you may view, or a thumbnail of it',
  description:
    'Streams the file with its ETag; a single `Range` answers 206 with that part. `thumb` (one of the sizes in uploads.thumbnails.sizes) answers an image thumbnail, made once and kept beside the file; `fit` is how it fills the box (default cover).',
  query: Type.Object({
    thumb: Type.Optional(
      Type.String({ pattern: '^[1-9][0-9]{0,3}x[1-9][0-9]{0,3}$', maxLength: 9, description: 'WIDTHxHEIGHT' }),
    ),
    fit: Type.Optional(Enum(THUMBNAIL_FITS)),
  }),
  response: Type.String(),
  responseType: 'binary',
  responses: {
    '206': { description: 'The part of the file the Range header named (Content-Range says which)' },
    '304': { description: 'The file has not changed since the ETag in If-None-Match' },
  },
  errors: [
    'VALIDATION_ERROR',
    'UNAUTHORIZED',
    'FORBIDDEN',
    'NOT_FOUND',
    'RANGE_NOT_SATISFIABLE',
    'UNPROCESSABLE_ENTITY',
    'SERVICE_UNAVAILABLE',
  ],
});

export const ImportOutcome = Type.Object(
  {
    imported: Type.Integer({ description: 'Records written (with dryRun: that would have been)' }),
    lines: Type.Integer({ description: 'The last line read' }),
    written: Type.Boolean({ description: 'Whether anything was written' }),
    dryRun: Type.Boolean(),
    errors: Type.Array(Type.Object({ line: Type.Integer(), message: Type.String() }), {
      description: 'The first 100 refused lines, by line number',
    }),
    moreErrors: Type.Integer({ description: 'Refused lines beyond those listed' }),
  },
  { description: 'What an import did, or would do' },
);

export const importRecords = route({
  method: 'POST',
  path: '/api/v1/import/{entity}',
  operationId: 'import_records',
  tag: 'import',
  access: 'admin',
  summary: 'Import records from a JSON-lines or CSV file (admin), as entigen import does',
  description:
    "Multipart, the part `file` (at most 50 MB). Every line goes through the entity's create validator, references and unique fields. All or nothing unless continueOnError; dryRun checks and writes everything, then rolls it back. 200 with what was done, refused lines included (a refused import writes nothing).",
  query: Type.Object({
    format: Type.Optional(Enum(['jsonl', 'csv'] as const)),
    dryRun: Type.Optional(Type.Boolean()),
    continueOnError: Type.Optional(Type.Boolean()),
    fromLine: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
  }),
  body: Type.Object({ file: Type.String({ contentMediaType: 'application/octet-stream' }) }),
  bodyType: 'multipart',
  idempotent: false,
  response: Data(ImportOutcome),
  errors: [...ADMIN, ...INPUT, 'NOT_FOUND'],
});

export const rotateWebhookSecret = route({
  method: 'POST',
  path: '/api/v1/webhooks/{id}/rotate-secret',
  operationId: 'webhooks_rotateSecret',
  tag: 'webhooks',
  access: 'admin',
  summary: 'A new signing secret for the webhook, shown in this answer only (the old one stops at once)',
  response: Data(Component('Webhook')),
  errors: [...ADMIN, 'NOT_FOUND'],
});

export const replayWebhook = route({
  method: 'POST',
  path: '/api/v1/webhooks/{id}/replay',
  operationId: 'webhooks_replay',
  tag: 'webhooks',
  access: 'admin',
  summary: "Send the webhook's matching events again, at most 1000 (202 with how many were queued)",
  description: 'The events after `from` up to `to` (default: the last event).',
  body: Body({
    from: Type.Integer({ minimum: 0, description: 'Events after this id are sent' }),
    to: Type.Optional(Type.Integer({ minimum: 0, description: 'The last event id to send (default: the last event)' })),
  }),
  status: 202,
  response: Data(Type.Object({ queued: Type.Integer(), from: Type.Integer(), to: Type.Integer() })),
  errors: [...ADMIN, ...INPUT, 'NOT_FOUND'],
});

export const redeliver = route({
  method: 'POST',
  path: '/api/v1/webhookDeliveries/{id}/redeliver',
  operationId: 'webhookDeliveries_redeliver',
  tag: 'webhookDeliveries',
  access: 'admin',
  summary: 'Sends a delivered or failed delivery again (202); 409 while it is still pending',
  status: 202,
  response: Data(Component('WebhookDelivery')),
  errors: [...ADMIN, 'NOT_FOUND', 'CONFLICT'],
});

export const BatchOperation = Body({
  op: Enum(BATCH_OPS, { description: 'What to do: an entity operation, or a custom endpoint' }),
  entity: Text(100, { description: 'The entity, by plural' }),
  id: Type.Optional(
    Text(200, {
      description: 'The record (update, increment, archive, restore, delete, `/{id}` endpoints), or `$N.id`',
    }),
  ),
  name: Type.Optional(Text(100, { description: 'op endpoint: the custom endpoint' })),
  body: Type.Optional(
    Type.Unknown({
      description:
        'The body the operation takes alone (create, update, increment, endpoints); a string that is exactly `$N.path` is that value of operation N',
    }),
  ),
  permanent: Type.Optional(Type.Boolean({ description: 'op delete of an entity with a trash: delete for good' })),
});

export const BatchResult = Type.Object({
  status: Type.Integer({ description: 'The status the operation would have answered alone' }),
  body: Type.Object({ data: Type.Unknown() }, { description: 'The body it would have answered alone' }),
});

export const batch = route({
  method: 'POST',
  path: '/api/v1/batch',
  operationId: 'batch',
  tag: 'batch',
  access: 'optional',
  summary: `Up to ${MAX_BATCH_OPERATIONS} writes across entities in one transaction: all or nothing`,
  description:
    "Each operation is authorised, validated, hooked and logged as if sent alone; a failure answers that operation's error (its index in `details.operation`, its details under `operations.<i>.`) and stores nothing. A string that is exactly `$N.path` (as `$0.id`) in an `id` or `body` is the value at that path of operation N's answer (`data`), N earlier. Idempotency-Key covers the whole batch; `x-change-reason` applies to every operation.",
  body: Body({
    operations: Type.Array(BatchOperation, { minItems: 1, maxItems: MAX_BATCH_OPERATIONS }),
  }),
  response: Data(Type.Object({ results: Type.Array(BatchResult) })),
  errors: [...ADMIN, ...INPUT, 'NOT_FOUND', 'CONFLICT', 'UNPROCESSABLE_ENTITY'],
});
