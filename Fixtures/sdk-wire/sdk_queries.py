"""The SDKs' query and update requests that operators.py and import-app.py share, each built as
that SDK's source does (the sources are named in operators.py's docstring): the Swift SDK's
PUT of an object (NCMBObject.save()), the JavaScript SDK's Query.fetchAll (qs.parse) and
DataStore.batch, the Android SDK's NCMBQuery.find(), and a catastrophic $regex sent while
another client is served."""
import threading, urllib.parse
import android, js, swift


def names(answer, problems, field='name'):
    """The `field` of each result, or None with the answer added to `problems`."""
    if answer.status != 200:
        problems.append(['status', answer.status, answer.body[:300].decode(errors='replace')])
        return None
    return [r.get(field) for r in answer.json.get('results', [])]


def geo(latitude, longitude):
    return {'__type': 'GeoPoint', 'latitude': latitude, 'longitude': longitude}


def pointer(class_name, object_id):
    return {'__type': 'Pointer', 'className': class_name, 'objectId': object_id}


class Swift(swift.SwiftSDK):
    def put(self, class_name, object_id, fields):
        return self.request('PUT', 'classes/%s/%s' % (class_name, object_id),
                            body=swift.encode_json(fields).encode())


class JavaScript(js.JavaScriptSDK):
    def fetch_all(self, class_name, where=None, order=None, limit=None, include=None,
                  count=False):
        """Query.fetchAll: the options joined, then qs.parse (`+` is a space, %XX decoded)."""
        options = []
        if where:
            options.append('where=' + js.stringify(where))
        if limit:
            options.append('limit=%d' % limit)
        if count:
            options.append('count=1')
        if include:
            options.append('include=' + include)
        if order:
            options.append('order=' + order)
        query = {}
        for option in '&'.join(options).split('&'):
            name, _, value = option.partition('=')
            query[urllib.parse.unquote_plus(name)] = urllib.parse.unquote_plus(value)
        return self.request('GET', 'classes/' + class_name, query)

    def batch(self, class_name, items):
        """DataStore.batch(list): one POST per 50."""
        requests = [{'method': 'POST', 'path': '2013-09-01/classes/' + class_name, 'body': item}
                    for item in items]
        return self.request('POST', 'batch', body=js.stringify({'requests': requests}).encode())


class Android(android.AndroidSDK):
    def find(self, class_name, where=None, order=None, limit=None, count=False, include=None):
        """getConditions(): where, limit, skip, include, order, count, as a JSONObject keeps
        them (insertion order); count() sets limit 1."""
        query = {}
        if where:
            query['where'] = android.to_json(where)
        if count:
            query['limit'] = '1'
        elif limit is not None:
            query['limit'] = str(limit)
        if include:
            query['include'] = include
        if order:
            query['order'] = order
        if count:
            query['count'] = '1'
        return self.request('GET', 'classes/' + class_name, query)


def catastrophic_regex(attack, serve):
    """Runs `attack` (a request that may run long) on a thread and, once it is on its way,
    `serve` (another client's request); returns (attack's answer or None after 60 s, serve's)."""
    outcome = []
    attacker = threading.Thread(target=lambda: outcome.append(attack()))
    attacker.start()
    threading.Event().wait(0.05)
    served = serve()
    attacker.join(60)
    return (outcome[0] if outcome else None), served


def refused_cut_off_or_none_found(answer):
    """What a catastrophic $regex over strings it cannot match may be answered: NCMB's refusal
    of the pattern (E400002), the request stopped at its time limit (E500001), or, from an
    engine whose regex does not backtrack (PostgreSQL's), the right answer: no results."""
    return (answer.status == 400 and answer.code() == 'E400002') \
        or (answer.status == 500 and answer.code() == 'E500001') \
        or (answer.status == 200 and (answer.json or {}).get('results') == [])
