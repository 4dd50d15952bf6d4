// expect: error 2:27 bitfields are not supported
struct flags { unsigned a : 1; };
