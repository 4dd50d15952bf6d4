// expect: error 2:20 33 bits wide
struct s { int x : 33; };
