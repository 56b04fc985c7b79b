import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { cell, rowsTable, schemaRows } from '../../generator/docs/schemaReference.js';
import { configSchema, entitySchema } from '../../generator/schema/schemas.js';
import { ENVIRONMENT_GROUPS, type EnvironmentVariable } from '../../runtime/config/environment.js';
import { packageRoot } from '../../runtime/model/packageRoot.js';
import { ENVIRONMENT_VARIABLES } from '../../runtime/server/environment.js';
import { entigenProgram } from '../program.js';
import { apiDeclarations } from './apiDeclarations.js';

/**
 * The parts of the reference pages written from the sources: each page keeps its own prose, and
 * between `<!-- reference:NAME -->` and `<!-- /reference:NAME -->` holds what is generated here.
 * `npm run docs:reference` writes them; a test fails when a committed page differs.
 */
export interface ReferenceRegion {
  /** The page, from the repository's root. */
  page: string;
  name: string;
  content: string;
}

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema and OpenAPI documents are walked by key.
type Schema = Record<string, any>;

export function referenceRegions(): ReferenceRegion[] {
  const entity = entitySchema as Schema;
  const config = configSchema as Schema;
  return [
    {
      page: 'docs/reference/entity-file.md',
      name: 'entity-file',
      content: rowsTable(schemaRows(entity, entity, '', ['field'])),
    },
    {
      page: 'docs/reference/entity-file.md',
      name: 'entity-field',
      content: rowsTable(schemaRows(entity, entity.$defs.field, '', ['field', 'value'])),
    },
    {
      page: 'docs/reference/entity-file.md',
      name: 'entity-items',
      content: rowsTable(schemaRows(entity, entity.$defs.value, '', ['field', 'value'])),
    },
    { page: 'docs/reference/config.md', name: 'config', content: rowsTable(schemaRows(config)) },
    { page: 'docs/reference/environment.md', name: 'environment', content: environmentTables(ENVIRONMENT_VARIABLES) },
    { page: 'docs/reference/cli.md', name: 'cli', content: cliReference(entigenProgram()) },
    ...API_SECTIONS.map(({ name, file, names }) => ({
      page: 'docs/reference/api.md',
      name,
      content: `\`\`\`ts\n// ${file}\n${apiDeclarations(file, names)}\n\`\`\``,
    })),
    { page: 'docs/reference/http.md', name: 'http-fixed', content: httpFixed(openApi()) },
    { page: 'docs/reference/http.md', name: 'http-entity', content: httpEntity(openApi()) },
    { page: 'docs/reference/metadata.md', name: 'metadata', content: httpMetadata(openApi()) },
  ];
}

/** The declarations of the API reference page, by region: what application code calls and receives. */
const API_SECTIONS = [
  {
    name: 'api-repository',
    file: 'runtime/repository.ts',
    names: ['Repository', 'FindOptions', 'FilterValue', 'FilterOps', 'Page', 'AggregateOptions'],
  },
  {
    name: 'api-hooks',
    file: 'runtime/context/hookTypes.ts',
    names: [
      'EntityHooks',
      'HookContext',
      'HookResult',
      'WriteOperation',
      'AfterCommitArgs',
      'ChangeEventName',
      'EndpointArgs',
      'PresentRecord',
    ],
  },
  { name: 'api-reject', file: 'runtime/context/reject.ts', names: ['reject', 'RejectCode'] },
  { name: 'api-caller', file: 'runtime/context/caller.ts', names: ['Caller', 'PublicUser'] },
  { name: 'api-jobs', file: 'runtime/jobs/scheduler.ts', names: ['JobContext', 'JobHandler'] },
] as const;

const openApi = (() => {
  let document: Schema | undefined;
  return () =>
    (document ??= JSON.parse(readFileSync(join(packageRoot, 'generated', 'openapi.json'), 'utf8')) as Schema);
})();

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** The entity whose operations stand for every entity's: the example app's, which has every kind. */
const SAMPLE_ENTITY = 'articles';

interface Operation {
  method: string;
  path: string;
  tag: string;
  summary: string;
  statuses: string;
}

function operations(document: Schema): Operation[] {
  const found: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      found.push({
        method: method.toUpperCase(),
        path,
        tag: operation.tags?.[0] ?? '',
        // The summary, then what the description adds.
        summary: [operation.summary, operation.description].filter(Boolean).join('. '),
        statuses: Object.keys(operation.responses ?? {}).join(', '),
      });
    }
  }
  return found;
}

function operationsTable(rows: readonly Operation[], path: (op: Operation) => string): string {
  const lines = ['| method | path | what | answers |', '|---|---|---|---|'];
  for (const op of rows) lines.push(`| ${op.method} | \`${path(op)}\` | ${cell(op.summary)} | ${op.statuses} |`);
  return lines.join('\n');
}

/** The routes that are not per entity, by tag: auth, roles, users, API keys, schema, history, health... */
function httpFixed(document: Schema): string {
  // An entity has both /{plural}/{id} and /{plural}/metadata; users (no metadata) and the
  // schema metadata (no id) do not.
  const paths = Object.keys(document.paths);
  const entityTags = new Set(
    paths
      .flatMap((path) => (/^\/api\/v1\/([A-Za-z]+)\/metadata$/.exec(path) ?? []).slice(1))
      .filter((tag) => paths.includes(`/api/v1/${tag}/{id}`)),
  );
  const fixed = operations(document).filter((op) => !entityTags.has(op.tag));
  const tags = [...new Set(fixed.map((op) => op.tag))];
  return tags
    .map(
      (tag) =>
        `### ${tag}\n\n${operationsTable(
          fixed.filter((op) => op.tag === tag),
          (op) => op.path,
        )}`,
    )
    .join('\n\n');
}

/** The routes by which an application describes itself: the schema's and each entity's metadata. */
function httpMetadata(document: Schema): string {
  const metadata = operations(document).filter(
    (op) => op.path.startsWith('/api/v1/schema/') || op.path.startsWith(`/api/v1/${SAMPLE_ENTITY}/metadata`),
  );
  return operationsTable(metadata, (op) => op.path.replace(`/api/v1/${SAMPLE_ENTITY}`, '/api/v1/{plural}'));
}

/** Every entity's routes, as the sample entity has them, with its plural as `{plural}`. */
function httpEntity(document: Schema): string {
  const sample = operations(document).filter((op) => op.tag === SAMPLE_ENTITY);
  return operationsTable(sample, (op) => op.path.replace(`/api/v1/${SAMPLE_ENTITY}`, '/api/v1/{plural}'));
}

function environmentTables(variables: readonly EnvironmentVariable[]): string {
  const parts: string[] = [];
  for (const [group, title] of Object.entries(ENVIRONMENT_GROUPS)) {
    const rows = variables.filter((v) => v.group === group);
    if (rows.length === 0) continue;
    parts.push(`### ${title}`, '', '| variable | default | overrides | meaning |', '|---|---|---|---|');
    for (const v of rows) {
      const fallback = v.default ?? '';
      const key = v.configKey ? `\`${v.configKey}\`` : '';
      parts.push(`| \`${v.name}\` | ${cell(fallback)} | ${key} | ${cell(v.description)} |`);
    }
    parts.push('');
  }
  return parts.join('\n').trimEnd();
}

function cliReference(program: Command): string {
  const parts: string[] = [];
  for (const command of program.commands) {
    const args = command.registeredArguments
      .map((a) => (a.required ? `<${a.name()}${a.variadic ? '...' : ''}>` : `[${a.name()}${a.variadic ? '...' : ''}]`))
      .join(' ');
    parts.push(`### \`entigen ${command.name()}\``, '', `\`entigen ${command.name()}${args ? ` ${args}` : ''}\``, '');
    parts.push(`${capitalize(command.description())}.`, '');
    const rows: string[] = [];
    for (const a of command.registeredArguments)
      rows.push(
        `| \`${a.name()}\` | argument${a.required ? ', required' : ''} | ${fallbackOf(a.defaultValue)} | ${a.description} |`,
      );
    for (const o of command.options as Option[])
      rows.push(
        `| \`${o.flags}\` | option${o.mandatory ? ', required' : ''} | ${fallbackOf(o.defaultValue)} | ${o.description} |`,
      );
    if (rows.length > 0) parts.push('| name | kind | default | meaning |', '|---|---|---|---|', ...rows, '');
  }
  return parts.join('\n').trimEnd();
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const fallbackOf = (value: unknown) => (value === undefined ? '' : `\`${String(value)}\``);

/** The page's text with the region's content replaced; throws when the page has no such region. */
export function fillRegion(text: string, name: string, content: string): string {
  const start = `<!-- reference:${name} -->`;
  const end = `<!-- /reference:${name} -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`no region ${name} (${start} ... ${end})`);
  return `${text.slice(0, from + start.length)}\n\n${content}\n\n${text.slice(to)}`;
}

/** Each page's text as it should be: the committed page with every region filled in. */
export function referencePages(): Map<string, string> {
  const pages = new Map<string, string>();
  for (const region of referenceRegions()) {
    const text = pages.get(region.page) ?? readFileSync(join(packageRoot, region.page), 'utf8');
    pages.set(region.page, fillRegion(text, region.name, region.content));
  }
  return pages;
}
