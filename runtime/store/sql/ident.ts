/** Double-quoted SQL identifier; names come from the model, which admits only letters and digits. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
