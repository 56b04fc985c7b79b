/** Text placed in HTML (pages, mail bodies): the five characters that could end an element or attribute, as entities. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
