import { describe, expect, it } from 'vitest';
import { findDefaultModel } from '../catalog/default-models.js';
import { applyMirror, MirrorError, parseMirror } from './mirror-url.js';
import { fileNameOfUrl, PullTargetError, resolvePullTarget } from './pull-target.js';

const qwen = findDefaultModel('qwen2.5-0.5b-instruct')!;
const noFiles = { modelsDirectory: '/data/models', isFile: () => false };

describe('applyMirror', () => {
  it('replaces scheme and host, keeps path and query, and prefixes the mirror path', () => {
    const url = 'https://huggingface.co/Qwen/x-GGUF/resolve/abc/f.gguf?download=true';
    expect(applyMirror(url, undefined)).toBe(url);
    expect(applyMirror(url, 'http://10.0.0.5:8080')).toBe('http://10.0.0.5:8080/Qwen/x-GGUF/resolve/abc/f.gguf?download=true');
    expect(applyMirror(url, 'https://mirror.example/hf/')).toBe('https://mirror.example/hf/Qwen/x-GGUF/resolve/abc/f.gguf?download=true');
  });

  it('refuses a mirror that is not an http(s) URL', () => {
    expect(() => parseMirror('mirror.example')).toThrow(MirrorError);
    expect(() => parseMirror('ftp://mirror.example')).toThrow(/http/);
  });
});

describe('resolvePullTarget', () => {
  it('maps a catalog id or alias to its URL (through the mirror), file and checksum', () => {
    expect(resolvePullTarget('Qwen/Qwen2.5-0.5B-Instruct', { ...noFiles, mirror: 'http://127.0.0.1:9' })).toEqual({
      kind: 'download',
      url: `http://127.0.0.1:9${new URL(qwen.url).pathname}`,
      destination: `/data/models/${qwen.file}`,
      expectedSha256: qwen.sha256,
      expectedSize: qwen.sizeBytes,
      model: qwen,
    });
    expect(() => resolvePullTarget(qwen.id, { ...noFiles, sha256: 'ab'.repeat(32) })).toThrow(/its own checksum/);
  });

  it('takes a URL as is (no mirror) and names the file after its last path segment', () => {
    const target = resolvePullTarget('https://example.com/a/My%20Model.gguf?x=1', {
      ...noFiles,
      mirror: 'http://mirror',
      sha256: 'AB'.repeat(32),
    });
    expect(target).toEqual({
      kind: 'download',
      url: 'https://example.com/a/My%20Model.gguf?x=1',
      destination: '/data/models/My Model.gguf',
      expectedSha256: 'ab'.repeat(32),
    });
    expect(() => fileNameOfUrl('https://example.com/')).toThrow(PullTargetError);
    expect(() => fileNameOfUrl('https://example.com/a/..%2F..%2Fetc')).toThrow(PullTargetError);
  });

  it('copies a local file, held to the catalog checksum when it bears a catalog file name', () => {
    const context = { modelsDirectory: '/data/models', isFile: (path: string) => path.startsWith('/media/') };
    expect(resolvePullTarget(`/media/${qwen.file}`, context)).toMatchObject({
      kind: 'copy',
      expectedSha256: qwen.sha256,
      expectedSize: qwen.sizeBytes,
    });
    expect(resolvePullTarget('/media/other.gguf', context)).toEqual({
      kind: 'copy',
      source: '/media/other.gguf',
      destination: '/data/models/other.gguf',
      expectedSha256: undefined,
      expectedSize: undefined,
      model: undefined,
    });
    expect(() => resolvePullTarget('/nowhere/x.gguf', context)).toThrow('no file at /nowhere/x.gguf');
    expect(() => resolvePullTarget('gpt-5', context)).toThrow(/not a catalog model/);
  });
});
