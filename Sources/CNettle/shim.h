#include <nettle/sha2.h>
#include <nettle/hmac.h>
#include <nettle/base64.h>
#include <nettle/memops.h>
