// The `npm` that hatch-jupyter-builder's npm_builder calls (pyproject.toml's `npm` build
// kwarg): it runs `<npm> install`, then `<npm> run <build_cmd>`, and offers no setting for the
// install step. `install` here is `npm ci`: the exact versions package-lock.json pins, and a
// build never rewrites the lock file (`npm install` may). Everything else goes to npm as given.
//
// `npm ci` deletes node_modules first, so it is skipped when node_modules was installed from
// the current lock file already (npm's own record of that install, node_modules/.package-lock.json,
// is newer than package.json and package-lock.json): a repeated `pip install -e .` does not
// reinstall a thousand packages.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const args = process.argv.slice(2);

function upToDate() {
  const installed = 'node_modules/.package-lock.json';
  if (!existsSync(installed)) {
    return false;
  }
  const t = statSync(installed).mtimeMs;
  return ['package.json', 'package-lock.json'].every(
    f => statSync(f).mtimeMs <= t
  );
}

function npm(argv) {
  console.log(`npm-ci.mjs: npm ${argv.join(' ')}`);
  const r = spawnSync('npm', argv, { stdio: 'inherit' });
  if (r.error) {
    throw r.error;
  }
  process.exit(r.status ?? 1);
}

if (args[0] === 'install' && args.length === 1) {
  if (upToDate()) {
    console.log(
      'npm-ci.mjs: node_modules matches package-lock.json, no install needed'
    );
    process.exit(0);
  }
  npm(['ci']);
} else {
  npm(args);
}
