/**
 * Points a catalog URL at a mirror, as `HF_ENDPOINT` does for Hugging Face
 * tools: the mirror's scheme, host and port (and path prefix, if it has one)
 * replace those of the URL; the rest of the path and the query are kept.
 *
 *   applyMirror('https://huggingface.co/Qwen/x/resolve/abc/f.gguf', 'http://10.0.0.5:8080/hf')
 *   → 'http://10.0.0.5:8080/hf/Qwen/x/resolve/abc/f.gguf'
 */
export class MirrorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MirrorError';
  }
}

export function applyMirror(url: string, mirror: string | undefined): string {
  if (mirror === undefined || mirror === '') return url;
  const base = parseMirror(mirror);
  const source = new URL(url);
  const prefix = base.pathname.replace(/\/+$/, '');
  return `${base.origin}${prefix}${source.pathname}${source.search}`;
}

/** The mirror as a URL; throws `MirrorError` naming the text when it is not an http(s) URL. */
export function parseMirror(mirror: string): URL {
  let base: URL;
  try {
    base = new URL(mirror);
  } catch {
    throw new MirrorError(`mirror "${mirror}" is not a URL; give one like https://hf-mirror.example.com`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new MirrorError(`mirror "${mirror}" must be an http:// or https:// URL`);
  if (base.search !== '' || base.hash !== '') throw new MirrorError(`mirror "${mirror}" must not have a query or fragment`);
  return base;
}
