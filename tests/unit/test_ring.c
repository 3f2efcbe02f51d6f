typedef int placeholder;
