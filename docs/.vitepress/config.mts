import { defineConfig } from 'vitepress';

// The documentation site: VitePress (Markdown pages, a sidebar, local search built in, dead
// internal links fail the build). `npm run docs:build` writes docs/.vitepress/dist;
// scripts/checkDocLinks.mjs then checks every internal link and anchor of the built pages.
export default defineConfig({
  title: 'entigen',
  description: 'YAML entity files in, a production REST/JSON backend out.',
  // Served by entigen itself at /docs (runtime/http/docsSiteRoutes.ts) when built.
  base: '/docs/',
  cleanUrls: true,
  lastUpdated: false,
  // Folders of real files the recipes are made of: their Markdown is not pages of the site.
  srcExclude: ['recipes/*/**/*.md', 'README.md'],
  markdown: {
    lineNumbers: false,
    // Pages are Vue templates, where {{ }} interpolates; the docs show entigen's own {{user.id}}
    // macros literally, in inline code (v-pre) and in text (the braces as character references).
    config(md) {
      const code = md.renderer.rules.code_inline!;
      md.renderer.rules.code_inline = (tokens, idx, options, env, self) =>
        code(tokens, idx, options, env, self).replace(/^<code/, '<code v-pre');
      const text = md.renderer.rules.text!;
      md.renderer.rules.text = (tokens, idx, options, env, self) =>
        text(tokens, idx, options, env, self).replace(/\{\{/g, '&#123;&#123;').replace(/\}\}/g, '&#125;&#125;');
    },
  },
  themeConfig: {
    search: { provider: 'local' },
    outline: { level: [2, 3] },
    nav: [
      { text: 'Guide', link: '/guide/getting-started' },
      { text: 'Concepts', link: '/concepts/entities' },
      { text: 'Reference', link: '/reference/' },
      { text: 'Recipes', link: '/recipes/' },
    ],
    sidebar: [
      {
        text: 'Guide',
        items: [
          { text: 'From zero to a running API', link: '/guide/getting-started' },
          { text: 'Business logic', link: '/guide/business-logic' },
          { text: 'Realtime and webhooks', link: '/guide/realtime-and-webhooks' },
          { text: 'Identity', link: '/guide/identity' },
          { text: 'The admin console', link: '/guide/admin-console' },
          { text: 'Many instances', link: '/guide/many-instances' },
          { text: 'Traces (OpenTelemetry)', link: '/guide/tracing' },
          { text: 'Deployment', link: '/guide/deployment' },
          { text: 'Backups', link: '/guide/backups' },
          { text: 'Export and import', link: '/guide/import-export' },
          { text: 'Embedding and HTTP adapters', link: '/guide/embedding' },
          { text: 'AI agents (MCP)', link: '/guide/ai-agents' },
        ],
      },
      {
        text: 'Concepts',
        items: [
          { text: 'The entity model', link: '/concepts/entities' },
          { text: 'Permissions and access', link: '/concepts/access' },
          { text: 'List queries', link: '/concepts/queries' },
          { text: 'History and approvals', link: '/concepts/history' },
          { text: 'The request pipeline', link: '/concepts/request-pipeline' },
          { text: 'The event log', link: '/concepts/event-log' },
          { text: 'Stores', link: '/concepts/stores' },
          { text: 'What build writes', link: '/concepts/build-output' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'Overview', link: '/reference/' },
          { text: 'The entity file', link: '/reference/entity-file' },
          { text: 'entigen.config.yaml', link: '/reference/config' },
          { text: 'Environment variables', link: '/reference/environment' },
          { text: 'CLI', link: '/reference/cli' },
          { text: 'HTTP endpoints', link: '/reference/http' },
          { text: 'Repository, hook and job APIs', link: '/reference/api' },
          { text: 'Permission grammar', link: '/reference/permissions' },
          { text: 'Metadata endpoints', link: '/reference/metadata' },
          { text: 'Error codes', link: '/reference/errors' },
          { text: 'Dependencies', link: '/reference/dependencies' },
        ],
      },
      {
        text: 'Recipes',
        items: [
          { text: 'Overview', link: '/recipes/' },
          { text: 'A support desk', link: '/recipes/support-desk' },
          { text: 'An HR directory', link: '/recipes/hr-directory' },
          { text: 'A multi-tenant SaaS', link: '/recipes/saas' },
          { text: 'A content site', link: '/recipes/content-site' },
          { text: 'Inside an Express app', link: '/recipes/embedded-express' },
        ],
      },
      {
        text: 'Project',
        items: [
          { text: 'Benchmarks', link: '/benchmarks' },
          { text: 'Departures from the design', link: '/departures' },
          { text: 'Upgrading', link: '/upgrading' },
          { text: 'Security', link: '/security' },
        ],
      },
    ],
  },
});
