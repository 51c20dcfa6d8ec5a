"""Password accounts through the official Swift SDK's requests (NIFCLOUD-mbaas/ncmb_swift 1.4.2),
as swift.py builds every request, against `forum serve`:
- NCMB/NCMBUser.swift signUp() -> NCMB/service/NCMBUserService.swift: POST users with the user's
  fields as JSONSerialization writes them ({"userName":…,"password":…}).
- NCMB/service/NCMBLoginService.swift logIn(userName:mailAddress:password:): POST login with the
  body {"userName":…,"password":…} (or {"mailAddress":…,"password":…}), no query.
- NCMB/service/NCMBLogoutService.swift: GET logout with the session token.
- NCMBUser.save() of a changed password: PUT users/ID {"password":…}.
Prints {"problems": [...]}. Arguments: PORT KEYS-JSON"""
import json, os, sys, uuid
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swift

port, keys = int(sys.argv[1]), json.loads(sys.argv[2])
problems = []


def expect(name, got, want):
    if got != want:
        problems.append([name, got, want])


class Account(swift.SwiftSDK):
    def sign_up(self, user_name, password):
        answer = self.request('POST', 'users', body=swift.encode_json(
            {'userName': user_name, 'password': password}).encode())
        if answer.status == 201:
            self.session_token = answer.json['sessionToken']
        return answer

    def log_in(self, user_name=None, password='', mail_address=None):
        fields = {'userName': user_name} if user_name is not None else {'mailAddress': mail_address}
        fields['password'] = password
        answer = self.request('POST', 'login', body=swift.encode_json(fields).encode())
        if answer.status == 200:
            self.session_token = answer.json['sessionToken']
        return answer

    def log_out(self):
        return self.request('GET', 'logout')

    def change_password(self, object_id, password):
        return self.request('PUT', 'users/' + object_id,
                            body=swift.encode_json({'password': password}).encode())


name = 'swift_' + uuid.uuid4().hex[:8]
app = Account(port, keys['applicationKey'], keys['clientKey'])
answer = app.sign_up(name, 'first password')
expect('swift: signUp', answer.status, 201)
me = (answer.json or {}).get('objectId')
expect('swift: signUp answers no password', 'password' in (answer.json or {}), False)
other = Account(port, keys['applicationKey'], keys['clientKey'])
answer = other.log_in(name, 'first password')
expect('swift: logIn', [answer.status, (answer.json or {}).get('objectId'),
                        (answer.json or {}).get('userName')], [200, me, name])
expect('swift: logIn answers no password',
       [k for k in (answer.json or {}) if 'password' in k.lower()], [])
expect('swift: a session', bool((answer.json or {}).get('sessionToken')), True)
expect('swift: the session reads', other.find('Thread').status, 200)
answer = other.change_password(me or 'nobody', 'second password')
expect('swift: save of a new password', answer.status, 200)
answer = Account(port, keys['applicationKey'], keys['clientKey']).log_in(name, 'first password')
expect('swift: the old password', [answer.status, answer.code()], [401, 'E401002'])
answer = Account(port, keys['applicationKey'], keys['clientKey']).log_in(name, 'second password')
expect('swift: the new password', answer.status, 200)
answer = other.log_out()
expect('swift: logOut', answer.status, 200)
answer = other.find('Thread')
expect('swift: the session is over', [answer.status, answer.code()], [401, 'E401001'])
answer = Account(port, keys['applicationKey'], keys['clientKey']).log_in(
    mail_address='someone@example.com', password='x')
expect('swift: logIn by mail address', answer.status >= 400, True)
expect('swift: says the board has no mail', 'mail' in ((answer.json or {}).get('error') or ''),
       True)
print(json.dumps({'problems': problems}))
