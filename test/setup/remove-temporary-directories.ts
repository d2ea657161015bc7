/** Runs in every test file: what `temporaryDirectory` made goes when the file is done, failed or not. */
import { afterAll } from 'vitest';
import { removeTemporaryDirectories } from '../helpers/temporary-directory.js';

afterAll(removeTemporaryDirectories);
