import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MailTemplates } from './mailTemplates.js';

describe('mail templates', () => {
  it("renders the package's template: subject line, text and HTML, values escaped in HTML only", () => {
    const mail = new MailTemplates(mkdtempSync(join(tmpdir(), 'entigen-mail-'))).render('passwordReset', {
      appName: 'A&B',
      link: 'https://app.test/reset-password?token=abc&x="y"',
      token: 'abc',
    });
    expect(mail.subject).toBe('Reset your A&B password');
    expect(mail.text).not.toMatch(/^Subject:/);
    expect(mail.text).toContain('https://app.test/reset-password?token=abc&x="y"');
    expect(mail.html).toContain('https://app.test/reset-password?token=abc&#38;x=&#34;y&#34;');
    expect(mail.html).toContain('A&#38;B');
    expect(mail.html).not.toContain('{{');
  });

  it("takes the project's own template where it has one, and keeps the subject on one line", () => {
    const root = mkdtempSync(join(tmpdir(), 'entigen-mail-'));
    mkdirSync(join(root, 'templates', 'mail'), { recursive: true });
    writeFileSync(
      join(root, 'templates', 'mail', 'passwordReset.txt'),
      'Subject: {{appName}} reset\n\nCode {{token}} {{unknown}}.\n',
    );
    const mail = new MailTemplates(root).render('passwordReset', { appName: 'Evil\r\nBcc: x@y.test', token: 't1' });
    expect(mail.subject).toBe('Evil Bcc: x@y.test reset');
    expect(mail.text).toBe('Code t1 .\n');
    // The HTML part still comes from the package.
    expect(mail.html).toContain('<p>');
  });

  it('refuses a text template without its subject line', () => {
    const root = mkdtempSync(join(tmpdir(), 'entigen-mail-'));
    mkdirSync(join(root, 'templates', 'mail'), { recursive: true });
    writeFileSync(join(root, 'templates', 'mail', 'passwordReset.txt'), 'Hello\n');
    expect(() => new MailTemplates(root).render('passwordReset', {})).toThrow(/Subject/);
  });
});
