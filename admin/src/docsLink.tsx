// Links into entigen's documentation site, which the server serves at /docs when it is built.
// Until the server says the site is there, the console shows no link that would lead nowhere.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

let available: Promise<boolean> | undefined;

function siteAvailable(): Promise<boolean> {
  available ??= fetch('/docs/', { method: 'HEAD', credentials: 'same-origin' }).then(
    (response) => response.ok,
    () => false,
  );
  return available;
}

/** A link to a page of the documentation (`reference/permissions#rule-forms`), or nothing without the site. */
export function DocsLink({ page, children }: { page: string; children: ComponentChildren }) {
  const [shown, setShown] = useState(false);
  useEffect(() => {
    let live = true;
    void siteAvailable().then((ok) => live && setShown(ok));
    return () => {
      live = false;
    };
  }, []);
  if (!shown) return null;
  return (
    <a class="docs-link" href={`/docs/${page}`} target="_blank" rel="noopener">
      {children}
    </a>
  );
}
