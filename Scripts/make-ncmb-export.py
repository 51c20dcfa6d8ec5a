#!/usr/bin/env python3
"""Writes a large NCMB console export (issue 34's memory benchmark) to DIR.

The shape is the seed app's (NCMBMania/Swift_Forum_Demo): anonymous users, `Thread` (title,
description) and `Comment` (text, a pointer to its thread), each with the ACL the app gives
(`*` reads, its author writes), plus an app class `Post` of other apps' usual fields (a pointer,
a GeoPoint, a Date, an array). Sizes are in MB of JSON; every app-class file stays under
100 MB, the largest file the importer before streaming accepted, so both can be measured.

  Scripts/make-ncmb-export.py DIR [--mb 200] [--seed 34]
"""
import argparse
import json
import os
import random

ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'


def object_id(rng):
    return ''.join(rng.choice(ALPHABET) for _ in range(16))


def date(ms):
    seconds, millis = divmod(ms, 1000)
    import datetime
    moment = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    return moment.strftime('%Y-%m-%dT%H:%M:%S') + '.%03dZ' % millis


def acl(user):
    return {'*': {'read': True}, user: {'read': True, 'write': True}}


def write_class(path, objects):
    """One `{"results":[…]}` file, one object a line, written as it is made."""
    with open(path, 'w', encoding='utf-8') as out:
        out.write('{"results":[\n')
        first = True
        for item in objects:
            if not first:
                out.write(',\n')
            first = False
            out.write(json.dumps(item, ensure_ascii=False, separators=(',', ':')))
        out.write('\n]}\n')
    return os.path.getsize(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('dir')
    parser.add_argument('--mb', type=int, default=200)
    parser.add_argument('--seed', type=int, default=34)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.dir, exist_ok=True)
    start = 1_600_000_000_000
    # Budget: 5 % threads, 25 % comments, 70 % Post (in files of at most 90 MB).
    target = args.mb * 1024 * 1024
    users = [object_id(rng) for _ in range(max(10, args.mb * 50))]
    write_class(os.path.join(args.dir, 'user.json'), (
        {'objectId': u, 'createDate': date(start + i), 'updateDate': date(start + i),
         'userName': object_id(rng) + object_id(rng)[:9], 'mailAddress': None,
         'authData': {'anonymous': {'id': '%08X-0000-4000-8000-%012X' % (i, i)}}, 'acl': acl(u)}
        for i, u in enumerate(users)))
    threads = []

    def thread_objects():
        size = 0
        i = 0
        while size < target * 0.05:
            tid = object_id(rng)
            threads.append(tid)
            author = rng.choice(users)
            made = start + rng.randrange(3 * 365 * 86_400_000)
            item = {'objectId': tid, 'createDate': date(made), 'updateDate': date(made),
                    'title': 'スレッド %d について' % i,
                    'description': '説明文 ' * rng.randrange(1, 12), 'acl': acl(author)}
            size += len(json.dumps(item, ensure_ascii=False)) + 2
            i += 1
            yield item

    def comment_objects():
        size = 0
        while size < target * 0.25:
            author = rng.choice(users)
            made = start + rng.randrange(3 * 365 * 86_400_000)
            item = {'objectId': object_id(rng), 'createDate': date(made), 'updateDate': date(made),
                    'text': 'コメント ' * rng.randrange(1, 20),
                    'thread': {'__type': 'Pointer', 'className': 'Thread',
                               'objectId': rng.choice(threads)},
                    'acl': acl(author)}
            size += len(json.dumps(item, ensure_ascii=False)) + 2
            yield item

    write_class(os.path.join(args.dir, 'Thread.json'), thread_objects())
    write_class(os.path.join(args.dir, 'Comment.json'), comment_objects())
    remaining = target * 0.70
    part = 0
    while remaining > 1024 * 1024:
        chunk = min(remaining, 90 * 1024 * 1024)
        name = 'Post.json' if part == 0 else 'Post%d.json' % part

        def post_objects(budget=chunk):
            size = 0
            while size < budget:
                author = rng.choice(users)
                made = start + rng.randrange(3 * 365 * 86_400_000)
                item = {'objectId': object_id(rng), 'createDate': date(made),
                        'updateDate': date(made), 'text': 'post ' * rng.randrange(5, 40),
                        'author': {'__type': 'Pointer', 'className': 'user', 'objectId': author},
                        'location': {'__type': 'GeoPoint',
                                     'latitude': rng.uniform(-80, 80),
                                     'longitude': rng.uniform(-170, 170)},
                        'publishedAt': {'__type': 'Date', 'iso': date(made)},
                        'tags': ['t%d' % rng.randrange(100) for _ in range(rng.randrange(4))],
                        'likes': rng.randrange(1000), 'acl': acl(author)}
                size += len(json.dumps(item, ensure_ascii=False)) + 2
                yield item

        remaining -= write_class(os.path.join(args.dir, name), post_objects())
        part += 1
    total = sum(os.path.getsize(os.path.join(args.dir, f)) for f in os.listdir(args.dir))
    print('%s: %d bytes in %d files' % (args.dir, total, len(os.listdir(args.dir))))


if __name__ == '__main__':
    main()
