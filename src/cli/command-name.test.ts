import { describe, expect, it } from 'vitest';
import { commandName } from './command-name.js';

describe('commandName', () => {
  it('is what the person at the terminal types', () => {
    expect(commandName('/usr/local/bin/taskgate', '/home/me')).toBe('taskgate');
    expect(commandName('/srv/taskgate/dist/cli/main.js', '/srv/taskgate')).toBe('npx taskgate');
    expect(commandName('/srv/taskgate/dist/cli/main.js', '/home/me')).toBe('node /srv/taskgate/dist/cli/main.js');
  });
});
