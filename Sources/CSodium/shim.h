#include <sodium/core.h>
#include <sodium/crypto_pwhash.h>
