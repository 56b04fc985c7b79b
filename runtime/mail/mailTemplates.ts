import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeHtml } from '../model/escapeHtml.js';
import { packageRoot } from '../model/packageRoot.js';

/** The mails the runtime sends; each is `templates/mail/<name>.txt` (first line `Subject: ...`) and `.html`. */
export type MailTemplate =
  | 'passwordReset'
  | 'verifyEmail'
  | 'confirmEmailChange'
  | 'emailChangeNotice'
  | 'addressInUse'
  | 'mfaReset'
  | 'passwordlessSignIn'
  | 'testMail';

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/**
 * Mail templates: the project's `templates/mail/<name>.{txt,html}` where it has them, else the
 * package's. `{{name}}` is replaced by the value (HTML-escaped in the HTML part); an unknown
 * name is left empty. Files are read once.
 */
export class MailTemplates {
  private readonly cache = new Map<string, string>();

  constructor(private readonly projectRoot: string) {}

  render(name: MailTemplate, values: Record<string, string>): RenderedMail {
    const template = this.file(name, 'txt');
    const match = /^Subject:[ \t]*(.*)\r?\n(?:\r?\n)?/.exec(template);
    if (!match) throw new Error(`templates/mail/${name}.txt must start with a "Subject: ..." line`);
    const same = (value: string) => value;
    return {
      // Filled apart from the body: a header stays on one line, whatever a value holds.
      subject: this.fill(match[1], values, same)
        .replace(/[\r\n]+/g, ' ')
        .trim(),
      text: this.fill(template.slice(match[0].length), values, same),
      html: this.fill(this.file(name, 'html'), values, escapeHtml),
    };
  }

  private file(name: string, extension: 'txt' | 'html'): string {
    const key = `${name}.${extension}`;
    let text = this.cache.get(key);
    if (text === undefined) {
      const own = join(this.projectRoot, 'templates', 'mail', key);
      text = readFileSync(existsSync(own) ? own : join(packageRoot, 'templates', 'mail', key), 'utf8');
      this.cache.set(key, text);
    }
    return text;
  }

  private fill(template: string, values: Record<string, string>, quote: (value: string) => string): string {
    return template.replace(/\{\{(\w+)\}\}/g, (_m, key: string) =>
      Object.hasOwn(values, key) ? quote(values[key]) : '',
    );
  }
}
