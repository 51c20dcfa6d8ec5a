#ifndef FORUM_CFORUMCURL_H
#define FORUM_CFORUMCURL_H

// libForumCurl.so: Debian's libcurl (its static archive) with only TLS and zlib under it, opened
// by CCurl in place of the system's libcurl.so.4 and its thirty libraries. Its interface is
// libcurl's own (`curl_*`, exports.map); nothing here is called from Swift.

#endif
