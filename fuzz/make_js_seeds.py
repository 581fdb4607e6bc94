#!/usr/bin/env python3
"""Seed corpus for the `js` fuzz target: the JavaScript fixtures written for
the tests (a single bundle, code-split chunks, diff sides), and small
samples of every construct that nests, around a few depths, plus the
lexical corners the nesting scan must read as swc does.
Usage: python3 fuzz/make_js_seeds.py fuzz/corpus/js"""
import glob, os, shutil, sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
for p in sorted(glob.glob(os.path.join(root, 'fixtures/js/**/*.js'), recursive=True)):
    rel = os.path.relpath(p, os.path.join(root, 'fixtures/js')).replace('/', '-')
    shutil.copy(p, os.path.join(out, 'fixture-' + rel))

constructs = {
    'parens': lambda n: 'var x=' + '(' * n + '1' + ')' * n + ';',
    'objects': lambda n: 'var x=' + '{a:' * n + '1' + '}' * n + ';',
    'members': lambda n: 'var x=a' + '.b' * n + ';',
    'calls': lambda n: 'var x=f' + '(1)' * n + ';',
    'templates': lambda n: 'var x=' + '`${' * n + '1' + '}`' * n + ';',
    'plus': lambda n: 'var x=' + '1+' * n + '1;',
    'mixed': lambda n: 'var x=' + 'a*b+c<d&&!e||' * n + '1;',
    'ternary': lambda n: 'var x=' + 'a?b:' * n + 'c;',
    'arrows': lambda n: 'var x=' + 'a=>' * n + '1;',
    'elseif': lambda n: 'if(a)b;' + 'else if(a)b;' * n,
    'do': lambda n: 'do ' * n + 'x;' + 'while(0);' * n,
    'labels': lambda n: ''.join(f'l{i}:' for i in range(n)) + 'x;',
    'functions': lambda n: 'var f=' + 'function(){return ' * n + '1' + '}' * n + ';',
    'classes': lambda n: 'var c=' + 'class{m(){return ' * n + '1' + '}}' * n + ';',
}
for name, g in constructs.items():
    for n in (3, 60):
        open(os.path.join(out, f'deep-{name}-{n}.js'), 'w').write(g(n))

corners = [
    'if(a)/[(]/.test(b)\n',
    'x=a/b/(c)\n',
    'x={}/2/(c)\n',
    'x=function(){}/2\n',
    'x=this.if/2/(c)\n',
    'a\n++b\n',
    'x="\\\r\n(("\n',
    '<!-- ((\n-->((\nx\n',
    'for(x of /re/g);\n',
    'switch(x){case 1:case 2:default:y}\n',
    'async function f(){for await(x of y);}\n',
    'x=`a${`b${c}`}d`\n',
    'l:{break l}\n',
]
for i, c in enumerate(corners):
    open(os.path.join(out, f'corner-{i}.js'), 'w').write(c)
